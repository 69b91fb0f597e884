"""Is a source due? Its schedule's latest slot against its newest run in the ledger.

A source is due when its schedule fired (at or before now) after its newest run started, or
when it never ran. ``@manual`` sources are never due. The slot is the fire time; the interval
it closes is ``[previous fire, slot)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from dlt_ops.config import ProjectConfig
from dlt_ops.cron import Cron, cron_of
from dlt_ops.ledger import RunRecord
from dlt_ops.log import get_logger
from dlt_ops.plugins import PluginRegistry

log = get_logger(__name__)

_MINUTE = timedelta(minutes=1)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Due:
    """A source due now: the slot that fired and the interval it closes."""

    source: str
    schedule: str
    slot: datetime
    interval_start: datetime | None
    last_started: datetime | None


def schedule_of(config: ProjectConfig, source: str) -> Cron | None:
    """The source's schedule as cron in its time zone, ``None`` when it is manual or has none
    (or is invalid)."""
    cfg = config.source(source)
    if not cfg.schedule_valid:
        return None
    return cron_of(cfg.schedule, cfg.timezone)


#: How many of a source's newest ledger rows are read to find its last window.
RECENT = 20


def recent_runs(registry: PluginRegistry, config: ProjectConfig, source: str) -> list[RunRecord]:
    """The source's newest ledger rows (any status, any trigger), newest first, from every
    readable sink of its ledger; empty when it never ran (or no ledger can be read)."""
    return recent_runs_of(registry, config, [source])[source]


def recent_runs_of(
    registry: PluginRegistry, config: ProjectConfig, sources: Sequence[str]
) -> dict[str, list[RunRecord]]:
    """:func:`recent_runs` of every source, their databases read side by side."""
    from dlt_ops.destinations import resolve_destination
    from dlt_ops.ledger.readers import reading_lane, source_ledger
    from dlt_ops.target.sessions import SessionPool, map_by_database

    with SessionPool(registry, config) as pool:
        ledgers = []
        for source in sources:
            where = resolve_destination(config, source, None)
            ledger = source_ledger(registry, config, where, pool)
            ledgers.append((source, ledger, reading_lane(registry, pool, ledger)))
        lanes: dict[tuple[str, str, str], list[tuple[str, Any]]] = {}
        for source, ledger, key in ledgers:  # sources of one dataset share their ledger's reads
            lanes.setdefault(key, []).append((source, ledger))
        keys = list(lanes)
        found = map_by_database(keys, lambda i: _read_recent(lanes[keys[i]]))
    return {source: runs for answer in found for source, runs in answer.items()}


def _read_recent(ledgers: list[tuple[str, Any]]) -> dict[str, list[RunRecord]]:
    """The newest rows of each source of one lane (one dataset), from every readable sink: one
    read for all of them per sink that can (``read_runs_many``: a few statements, however many
    sources); one per source otherwise, or when that shared read failed."""
    found: dict[str, dict[str, RunRecord]] = {source: {} for source, _ in ledgers}
    per_sink: dict[str, list[tuple[str, Any]]] = {}
    for source, ledger in ledgers:
        for name, sink in ledger.with_method("read_runs"):
            per_sink.setdefault(name, []).append((source, sink))
    for name, sinks in per_sink.items():
        for source, runs in _read_sink(name, sinks).items():
            for row in runs:
                if row.started_at is not None:
                    found[source].setdefault(row.run_id, row)
    by_start = lambda r: _utc(r.started_at) or _EPOCH  # noqa: E731
    return {s: sorted(rows.values(), key=by_start, reverse=True) for s, rows in found.items()}


def _read_sink(name: str, sinks: list[tuple[str, Any]]) -> dict[str, list[RunRecord]]:
    from dlt_ops.ledger.sinks import LedgerQuery

    many = getattr(sinks[0][1], "read_runs_many", None)
    if len(sinks) > 1 and many is not None:
        try:
            return many([s for s, _ in sinks], LedgerQuery(source="", limit=RECENT)) or {}
        except Exception as exc:  # read them one by one: a broken one skips only itself
            log.debug("scheduler.ledger_unread", sink=name, error=str(exc))
    out: dict[str, list[RunRecord]] = {}
    for source, sink in sinks:
        try:
            out[source] = sink.read_runs(LedgerQuery(source=source, limit=RECENT)) or []
        except Exception as exc:  # a missing database or table: nothing ran there yet
            log.debug("scheduler.ledger_unread", source=source, sink=name, error=str(exc))
    return out


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def due(registry: PluginRegistry, config: ProjectConfig, source: str, now: datetime) -> Due | None:
    """``source`` when it is due at ``now``, else ``None``."""
    return all_due(registry, config, [source], now)[0]


def all_due(
    registry: PluginRegistry, config: ProjectConfig, sources: Sequence[str], now: datetime
) -> list[Due | None]:
    """:func:`due` of every source, in order; the ledgers of those whose schedule fired are
    read side by side."""
    slots: dict[str, tuple[Cron, datetime]] = {}
    for source in sources:
        cron = schedule_of(config, source)
        slot = cron.previous(now) if cron is not None else None
        if cron is not None and slot is not None:
            slots[source] = (cron, slot)
    runs = recent_runs_of(registry, config, list(slots)) if slots else {}
    return [
        _due_after(config, source, *slots[source], runs[source]) if source in slots else None
        for source in sources
    ]


def _due_after(
    config: ProjectConfig, source: str, cron: Cron, slot: datetime, runs: list[RunRecord]
) -> Due | None:
    last = _utc(runs[0].started_at) if runs else None
    if last is not None and last >= slot:
        return None
    # a windowed run starts where the newest completed window ended (missed slots included)
    ended = [w for r in runs if r.status == "completed" and (w := _utc(r.window_to)) is not None]
    before = max(ended) if ended and max(ended) < slot else cron.previous(slot - _MINUTE)
    return Due(source, str(config.source(source).schedule), slot, before, last)
