"""``[sources.<X>.dlt_ops] backfill_start / backfill_end / backfill_chunk``: the fixed window an
orchestrator partitions into backfill chunks (``dlt_ops.dagster``), checked when config loads.

The window is fixed on purpose: its edges and chunk size are the ``backfill_id``'s inputs, so a
partition run, ``pipeline backfill --from <start> --to <end> --chunk <chunk>`` and an Airflow
backfill DAG of the same window claim the same ``_dlt_backfills`` rows. An open-ended window
would change the id every day and reload what earlier runs loaded.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from dlt_ops.errors import ConfigError, ConfigValueError

_CHUNK = re.compile(r"(\d+)([dhm])")
CHUNK_EXPECTED = '"1d", "<N>h" with N dividing 24, or "<N>m" with N dividing 60'
EDGE_EXPECTED = "a timezone-aware timestamp (a TOML datetime or ISO string with an offset)"


def chunk_cron(chunk: str) -> str | None:
    """The cron whose ticks cut a day into ``chunk`` pieces; ``None`` when there is none
    (``2d``, ``5h``, ``7m``: their partitions would not line up with the chunks)."""
    match = _CHUNK.fullmatch(chunk.strip())
    if match is None or int(match.group(1)) == 0:
        return None
    n, unit = int(match.group(1)), match.group(2)
    if unit == "d":
        return "0 0 * * *" if n == 1 else None
    if unit == "h":
        return ("0 * * * *" if n == 1 else f"0 */{n} * * *") if 24 % n == 0 else None
    return ("* * * * *" if n == 1 else f"*/{n} * * * *") if 60 % n == 0 else None


def chunk_delta(chunk: str) -> timedelta:
    """The duration of a valid ``chunk`` (see :func:`chunk_cron`)."""
    match = _CHUNK.fullmatch(chunk.strip())
    assert match is not None, chunk
    unit = {"d": "days", "h": "hours", "m": "minutes"}[match.group(2)]
    return timedelta(**{unit: int(match.group(1))})


def parse_edge(value: Any) -> datetime | None:
    """A tz-aware UTC datetime from a TOML datetime or an ISO string; ``None`` when invalid."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    if not isinstance(value, datetime) or value.utcoffset() is None:
        return None
    return value.astimezone(UTC)


def is_edge(value: Any) -> bool:
    """The schema check of ``backfill_start`` / ``backfill_end``."""
    return parse_edge(value) is not None


def is_chunk(value: Any) -> bool:
    """The schema check of ``backfill_chunk``."""
    return isinstance(value, str) and chunk_cron(value) is not None


def _aligned(edge: datetime, delta: timedelta) -> bool:
    midnight = edge.replace(hour=0, minute=0, second=0, microsecond=0)
    return (edge - midnight) % delta == timedelta(0)


def resolve_backfill_keys(values: dict[str, Any], path: Path, prefix: str) -> None:
    """Turn the typed keys into UTC datetimes and check they form a window (in place)."""
    for key in ("backfill_start", "backfill_end"):
        if key in values:
            values[key] = parse_edge(values[key])
    start, end = values.get("backfill_start"), values.get("backfill_end")
    if (start is None) != (end is None):
        given, missing = ("backfill_start", "backfill_end") if end is None else (
            "backfill_end", "backfill_start")  # fmt: skip
        raise ConfigError(
            f"{path}: [{prefix}] sets {given} without {missing}: a partitioned backfill covers a "
            f"fixed window [backfill_start, backfill_end). Set both in {path.name}."
        )
    if start is None or end is None:
        return
    if start >= end:
        raise ConfigError(
            f"{path}: [{prefix}] backfill_start {start.isoformat()} must be before backfill_end "
            f"{end.isoformat()}. Edit them in {path.name}."
        )
    chunk = str(values.get("backfill_chunk", "1d"))
    delta = chunk_delta(chunk)
    for key, edge in (("backfill_start", start), ("backfill_end", end)):
        if not _aligned(edge, delta):
            raise ConfigValueError(
                path, f"[{prefix}] {key}", f"on a {chunk} boundary in UTC (partitions start there)",
                edge.isoformat(),
            )  # fmt: skip
