"""Record counts from a dlt trace, dlt's internal tables excluded."""

from __future__ import annotations

from typing import Any


def _user(name: str) -> bool:
    return not name.startswith("_dlt")


def records_extracted(trace: Any) -> int | None:
    """Items yielded by the run's resources (extract metrics); ``None`` when unavailable."""
    info = getattr(trace, "last_extract_info", None) if trace is not None else None
    if info is None:
        return None
    total = 0
    for metrics in info.metrics.values():
        for step in metrics:
            total += sum(
                m.items_count for name, m in step["resource_metrics"].items() if _user(name)
            )
    return total


def records_loaded(trace: Any) -> int | None:
    """Rows written to the destination's user tables (normalize row counts, child tables too)."""
    info = getattr(trace, "last_normalize_info", None) if trace is not None else None
    if info is None:
        return None
    return sum(int(count) for table, count in info.row_counts.items() if _user(table))


def first_load_id(load_info: Any) -> str | None:
    """dlt's load id of the run (the join key into ``_dlt_loads``)."""
    ids = getattr(load_info, "loads_ids", None) or []
    return str(ids[0]) if ids else None
