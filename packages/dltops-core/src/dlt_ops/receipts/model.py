"""``_dlt_ops_receipts``: one row per (run, resource), every count backed by what the run did.

Invariant, per row: ``records_in = filtered + rejected + failed + records_out``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dlt_ops.adapters import Column, ColumnType, TableSpec

RECEIPTS_TABLE_NAME = "_dlt_ops_receipts"

_T, _B, _D, _TS = ColumnType.TEXT, ColumnType.BIGINT, ColumnType.DOUBLE, ColumnType.TIMESTAMPTZ

RECEIPT_COLUMNS: tuple[Column, ...] = (
    Column("run_id", _T, nullable=False),
    Column("run_started_at", _TS, nullable=False),
    Column("pipeline_name", _T, nullable=False),
    Column("source_section", _T, nullable=False),
    Column("resource_name", _T, nullable=False),
    Column("records_in", _B, nullable=False),
    Column("filtered", _B, nullable=False),
    Column("rejected", _B, nullable=False),
    Column("warned", _B, nullable=False),
    Column("failed", _B, nullable=False),
    Column("records_out", _B, nullable=False),
    Column("rows_loaded", _B, nullable=False),
    Column("child_rows_loaded", _B, nullable=False),
    Column("pages", _B),
    Column("extract_s", _D),
    Column("normalize_s", _D),
    Column("load_s", _D),
    Column("cost", _D),
    Column("cost_basis", _T),
    Column("cost_measured", _D),
    Column("cost_estimated", _D),
    Column("failure_reason", _T),
    # added later: an older table gains them on the next write (TableSpec.evolving)
    Column("skipped_from", _T),
    Column("resumed_from", _T),
    Column("skipped_files", _T),
)
RECEIPTS_TABLE = TableSpec(
    RECEIPTS_TABLE_NAME, RECEIPT_COLUMNS, indexes=(("run_id", "run_started_at"),), evolving=True
)
RECEIPT_KEYS: tuple[str, ...] = tuple(c.name for c in RECEIPT_COLUMNS)
COUNT_KEYS = ("records_in", "filtered", "rejected", "warned", "failed", "records_out",
              "rows_loaded", "child_rows_loaded")  # fmt: skip


class CostBasis:
    """Where a cost figure comes from; ``mixed`` when a row has both parts."""

    measured = "measured"
    estimated = "estimated"
    mixed = "mixed"


@dataclass(frozen=True)
class ReceiptRow:
    """One resource's account of one run (or one attempt of a backfill chunk)."""

    run_id: str
    run_started_at: datetime
    pipeline_name: str
    source_section: str
    resource_name: str
    records_in: int = 0
    filtered: int = 0
    rejected: int = 0
    warned: int = 0
    failed: int = 0
    records_out: int = 0
    rows_loaded: int = 0
    child_rows_loaded: int = 0
    pages: int | None = None
    extract_s: float | None = None
    normalize_s: float | None = None
    load_s: float | None = None
    cost: float | None = None
    cost_basis: str | None = None
    cost_measured: float | None = None
    cost_estimated: float | None = None
    failure_reason: str | None = None
    #: a resume from a checkpoint: the span ``[skipped_from, resumed_from)`` this run did not
    #: extract (cursor values as text; ``skipped_from`` is ``None`` when the window had no start)
    skipped_from: str | None = None
    resumed_from: str | None = None
    #: files a filesystem reader could not parse and ``on_bad_file`` skipped: a JSON list of
    #: ``{"file", "line", "error", "quarantined"}``
    skipped_files: str | None = None

    @property
    def reconciles(self) -> bool:
        """``records_in = filtered + rejected + failed + records_out``."""
        return self.records_in == self.filtered + self.rejected + self.failed + self.records_out

    def values(self) -> tuple[Any, ...]:
        """Column values in table order."""
        return tuple(getattr(self, k) for k in RECEIPT_KEYS)

    def replace(self, **changes: Any) -> ReceiptRow:
        """A copy with ``changes``."""
        return dataclasses.replace(self, **changes)

    def as_json(self) -> dict[str, Any]:
        """JSON-ready dict, timestamps ISO-8601."""
        out: dict[str, Any] = {}
        for key in RECEIPT_KEYS:
            value = getattr(self, key)
            out[key] = value.isoformat() if isinstance(value, datetime) else value
        return out

    @classmethod
    def from_mapping(cls, values: dict[str, Any]) -> ReceiptRow:
        """Build from a row mapping (DB row or JSON line)."""
        data: dict[str, Any] = {k: values.get(k) for k in RECEIPT_KEYS}
        if isinstance(data["run_started_at"], str):
            data["run_started_at"] = datetime.fromisoformat(data["run_started_at"])
        for key in (*COUNT_KEYS, "pages"):
            if data[key] is not None:
                data[key] = int(data[key])
        return cls(**data)
