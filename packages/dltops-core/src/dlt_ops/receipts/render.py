"""The receipt table, seed-003 style: one line per resource, ``-`` for zero, reasons below."""

from __future__ import annotations

from collections.abc import Sequence

from dlt_ops.receipts.model import ReceiptRow
from dlt_ops.tables import Column, Table

COLUMNS = ("resource", "in", "out", "filtered", "rejected", "warned", "failed", "loaded", "cost")


def _count(value: int) -> str:
    return "-" if not value else str(value)


def money(value: float) -> str:
    """``$0``, ``$0.0300``, ``$12.50``: four decimals under a dollar, two above."""
    if value == 0:
        return "$0"
    return f"${value:.4f}" if abs(value) < 1 else f"${value:,.2f}"


def _cost_cell(row: ReceiptRow) -> str:
    return "-" if row.cost is None else money(row.cost)


def total_line(rows: Sequence[ReceiptRow]) -> str:
    """``$X (estimated)``, ``$X`` (measured) or ``$X ($Y measured + $Z estimated)``."""
    measured = [r.cost_measured for r in rows if r.cost_measured is not None]
    estimated = [r.cost_estimated for r in rows if r.cost_estimated is not None]
    if not measured and not estimated:
        return "total: no cost recorded (set [sources.<name>.dlt_ops.cost] rates)"
    m, e = sum(measured), sum(estimated)
    if measured and estimated:
        return f"total: {money(m + e)} ({money(m)} measured + {money(e)} estimated)"
    if measured:
        return f"total: {money(m)}"
    return f"total: {money(e)} (estimated)"


def receipt_table(rows: Sequence[ReceiptRow]) -> str:
    """The table, failure reasons on their own lines under it, and the total line."""
    if not rows:
        return "no receipt recorded for this run"
    body = [
        (r.resource_name, _count(r.records_in), _count(r.records_out), _count(r.filtered),
         _count(r.rejected), _count(r.warned), _count(r.failed),
         _count(r.rows_loaded + r.child_rows_loaded), _cost_cell(r))
        for r in rows
    ]  # fmt: skip
    table = Table([Column(c) for c in COLUMNS], gap="  ")
    for line in body:
        table.add(*line)
    lines = [line.plain for line in table.lines()]
    reasons = dict.fromkeys(
        f"{r.resource_name}: {r.failed} failed — {r.failure_reason}"
        if r.failed else f"{r.resource_name}: {r.failure_reason}"
        for r in rows if r.failure_reason
    )  # fmt: skip
    return "\n".join([*lines, *reasons, total_line(rows)])


def summed(rows: Sequence[ReceiptRow]) -> list[ReceiptRow]:
    """Rows of many runs (backfill chunks and retries) summed per resource."""
    by_resource: dict[str, ReceiptRow] = {}
    numeric = ("records_in", "filtered", "rejected", "warned", "failed", "records_out",
               "rows_loaded", "child_rows_loaded", "pages")  # fmt: skip
    money_keys = ("cost", "cost_measured", "cost_estimated")
    for row in rows:
        acc = by_resource.get(row.resource_name)
        if acc is None:
            by_resource[row.resource_name] = row.replace(failure_reason=None)
            continue
        changes = {k: (getattr(acc, k) or 0) + (getattr(row, k) or 0) for k in numeric}
        for key in money_keys:
            a, b = getattr(acc, key), getattr(row, key)
            changes[key] = None if a is None and b is None else (a or 0) + (b or 0)
        by_resource[row.resource_name] = acc.replace(**changes)
    return [by_resource[k] for k in sorted(by_resource)]
