"""Turning what a run did into receipt rows: counters, gate summaries, dlt's trace, costs."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Protocol

from dlt_ops.errors import ConfigError
from dlt_ops.receipts.counting import Tallies
from dlt_ops.receipts.model import CostBasis, ReceiptRow


class Verdicts(Protocol):
    """What the run's gates decided about one resource's rows (summed over gates)."""

    @property
    def rejected(self) -> int: ...
    @property
    def warned(self) -> int: ...
    @property
    def failed(self) -> int: ...


def _step_seconds(trace: Any) -> dict[str, float]:
    out: dict[str, float] = {}
    for step in getattr(trace, "steps", None) or []:
        if step.step in ("extract", "normalize", "load") and step.finished_at and step.started_at:
            out[step.step] = (step.finished_at - step.started_at).total_seconds()
    return out


def _written(trace: Any) -> dict[str, int]:
    """Items each resource wrote to this run's load package (dlt's extract metrics)."""
    info = getattr(trace, "last_extract_info", None) if trace is not None else None
    out: dict[str, int] = {}
    for metrics in info.metrics.values() if info is not None else []:
        for step in metrics:
            for name, metric in step["resource_metrics"].items():
                out[name] = out.get(name, 0) + metric.items_count
    return out


def _loaded(counts: Mapping[str, int], table: str) -> tuple[int, int]:
    """Rows of ``table`` and of its child tables (``<table>__<field>``) in ``counts``."""
    child = sum(n for t, n in counts.items() if t.startswith(f"{table}__"))
    return counts.get(table, 0), child


def _normalized_counts(trace: Any) -> Mapping[str, int]:
    info = getattr(trace, "last_normalize_info", None) if trace is not None else None
    return info.row_counts if info is not None else {}


def cost_rates(config: Mapping[str, Any], source: str) -> dict[str, float]:
    """``[sources.X.dlt_ops.cost]``: ``per_record`` and/or ``per_page``, non-negative numbers."""
    rates: dict[str, float] = {}
    for key, value in config.items():
        if key not in ("per_record", "per_page"):
            raise ConfigError(
                f"[sources.{source}.dlt_ops.cost] {key}: unknown key; use per_record or per_page."
            )
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise ConfigError(
                f"[sources.{source}.dlt_ops.cost] {key} must be a non-negative number, "
                f"got {value!r}."
            )
        rates[key] = float(value)
    return rates


def _costs(
    rates: Mapping[str, float], records_in: int, pages: int, measured: float | None
) -> dict[str, Any]:
    estimated = None
    if rates:
        estimated = rates.get("per_record", 0.0) * records_in + rates.get("per_page", 0.0) * pages
    parts = [p for p in (measured, estimated) if p is not None]
    if not parts:
        return {}
    basis = (
        CostBasis.mixed if len(parts) == 2
        else CostBasis.measured if measured is not None else CostBasis.estimated
    )  # fmt: skip
    return {"cost": sum(parts), "cost_basis": basis, "cost_measured": measured,
            "cost_estimated": estimated}  # fmt: skip


def build_receipts(
    *,
    run_id: str,
    run_started_at: datetime,
    pipeline_name: str,
    source: str,
    tallies: Tallies,
    verdicts: Mapping[str, Verdicts],
    trace: Any,
    phase: str,
    rates: Mapping[str, float],
    measured_cost: float | None = None,
    failure: str | None = None,
    tables: Mapping[str, str] | None = None,
    loaded_tables: Mapping[str, int] | None = None,
) -> list[ReceiptRow]:
    """One row per selected resource. ``phase`` is how far the run got (the runner's
    ``RunPhase``: setup, extract, gates, normalize, load, done); a run that stopped at
    or before the gates dropped its package, so nothing of it is ``out``.

    ``loaded_tables`` is what the run's load step loaded per table — its own package and any an
    earlier run left pending — as the ledger books it (the runner's ``LoadedBooks``); without
    it, what this run's normalize step counted."""
    written = _written(trace) if phase in ("normalize", "load", "done") else {}
    loaded_ok = phase == "done"
    loaded_counts = loaded_tables if loaded_tables is not None else _normalized_counts(trace)
    seconds = _step_seconds(trace)
    total_rows = 0
    rows: list[ReceiptRow] = []
    for name, tally in sorted(tallies.by_resource.items()):
        gate = verdicts.get(name)
        rejected, warned = (gate.rejected, gate.warned) if gate is not None else (0, 0)
        out = written.get(name, 0)
        if loaded_ok or out:
            # the package went on: fail verdicts within a max_violations tolerance loaded, so
            # they are out (and flagged as warned), never counted twice
            failed, warned = 0, warned + (gate.failed if gate is not None else 0)
        else:
            # nothing of this run's package can load: whatever passed dlt's filters and was
            # not quarantined was held back by the failure
            failed = tally.passed - rejected
        table = (tables or {}).get(name, name)
        rows_loaded, child_rows = _loaded(loaded_counts, table) if loaded_ok else (0, 0)
        total_rows += rows_loaded + child_rows
        rows.append(
            ReceiptRow(
                run_id=run_id,
                run_started_at=run_started_at,
                pipeline_name=pipeline_name,
                source_section=source,
                resource_name=name,
                records_in=tally.records_in,
                filtered=tally.records_in - tally.passed,
                rejected=rejected,
                warned=warned,
                failed=max(failed, 0),
                records_out=out,
                rows_loaded=rows_loaded,
                child_rows_loaded=child_rows,
                pages=tally.pages,
                extract_s=seconds.get("extract"),
                normalize_s=seconds.get("normalize"),
                load_s=seconds.get("load"),
                failure_reason=failure,
            )
        )
    return [
        row.replace(**_costs(rates, row.records_in, row.pages or 0,
                             _share(measured_cost, row, total_rows, len(rows))))
        for row in rows
    ]  # fmt: skip


def settled_receipts(
    *,
    run_id: str,
    run_started_at: datetime,
    pipeline_name: str,
    source: str,
    tables: Mapping[str, str],
    loaded_tables: Mapping[str, int],
) -> list[ReceiptRow]:
    """The receipt of a dead run whose load committed, written by the run that closed it: what
    its package proves, per resource (``tables``: resource → root table). What the resource
    yielded before dlt's filters was counted in the dead process only, so ``records_in`` and
    ``records_out`` are the rows that landed in the root table."""
    rows = []
    for name, table in sorted(tables.items()):
        root, child = _loaded(loaded_tables, table)
        rows.append(ReceiptRow(
            run_id=run_id, run_started_at=run_started_at, pipeline_name=pipeline_name,
            source_section=source, resource_name=name, records_in=root, records_out=root,
            rows_loaded=root, child_rows_loaded=child,
        ))  # fmt: skip
    return rows


def _share(measured: float | None, row: ReceiptRow, total_rows: int, n: int) -> float | None:
    """A run-level measured cost split across resources by the rows each one loaded."""
    if measured is None:
        return None
    if total_rows == 0:
        return measured / n if n else None
    return measured * (row.rows_loaded + row.child_rows_loaded) / total_rows
