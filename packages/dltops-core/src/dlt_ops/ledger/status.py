"""``pipeline status`` as data: per source, the ledger state and newest runs.

Read-only and cwd-independent. One destination session per (engine, dataset, credentials), not
per source. Four ledger states, never collapsed: ``ok``, ``missing`` (never ran there),
``unreadable`` (config or connection problem, with the reason), ``unsupported`` (core-tier
destination with no readable sink).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from dlt_ops.config import ProjectConfig
from dlt_ops.destinations import resolve_destination
from dlt_ops.errors import DltOpsError, LedgerUnreadableError
from dlt_ops.ledger.model import RunRecord, RunStatus, summarize_error
from dlt_ops.ledger.readers import reading_lane, source_ledger
from dlt_ops.ledger.sinks import LedgerQuery
from dlt_ops.ledger.writer import utcnow
from dlt_ops.log import get_logger
from dlt_ops.plugins import PluginRegistry
from dlt_ops.target import Target
from dlt_ops.target.sessions import SessionPool, map_by_database

if TYPE_CHECKING:
    from dlt_ops.ledger.freshness import Freshness, Slots

log = get_logger(__name__)

#: A running row whose heartbeat is older than this many intervals is probably dead.
ABANDONED_AFTER_BEATS = 3


@dataclass
class SourceStatus:
    """One source's ledger state and runs."""

    source: str
    ledger: str  # ok | missing | unreadable | unsupported
    error: str | None = None
    runs: list[RunRecord] = field(default_factory=list)
    #: why only part of the ledger is shown (a single-writer file held by a live run)
    note: str | None = None


def is_abandoned(run: RunRecord, now: datetime, heartbeat_seconds: float) -> bool:
    """A ``running`` row without a heartbeat for ``3 × heartbeat_seconds``."""
    if run.status != RunStatus.running:
        return False
    last = run.heartbeat_at or run.started_at
    return now - last > timedelta(seconds=heartbeat_seconds * ABANDONED_AFTER_BEATS)


def shown_status(run: RunRecord, now: datetime, heartbeat_seconds: float) -> str:
    """The status ``runs list`` and ``runs show`` print: ``abandoned`` for a ``running`` row
    whose heartbeat stopped (:func:`is_abandoned`), else the ledger's own."""
    return "abandoned" if is_abandoned(run, now, heartbeat_seconds) else str(run.status)


def _unsupported_message(engine: str) -> str:
    return f"destination '{engine}' has no DestinationAdapter (core mode)"


def _without_adapter(source: str, engine: str) -> SourceStatus:
    """Core tier is ``unsupported`` (no ledger can exist); a name dlt has no destination for is
    a broken config, so ``unreadable`` with the fix (dlt is imported only on this path)."""
    from dlt_ops.adapters.dlt_credentials import dlt_knows_destination

    if dlt_knows_destination(engine) is False:
        return SourceStatus(
            source,
            "unreadable",
            f"dlt has no destination named '{engine}': fix [dlt_ops] default_destination or "
            f"[sources.{source}.dlt_ops] destination in .dlt/config.toml",
        )
    return SourceStatus(source, "unsupported", _unsupported_message(engine))


def collect_status(
    registry: PluginRegistry,
    config: ProjectConfig,
    sources: Iterable[str],
    query: LedgerQuery,
    *,
    dataset: str | None = None,
) -> list[SourceStatus]:
    """Read each source's ledger (in ``dataset`` when given, overriding the config); never
    raises over a broken ledger. Ledgers in different databases are read side by side
    (:func:`~dlt_ops.target.sessions.map_by_database`)."""
    with SessionPool(registry, config) as pool:
        planned = [_plan(registry, config, pool, source, dataset) for source in sorted(sources)]
        to_read = [p for p in planned if isinstance(p, _Planned)]
        groups: dict[tuple[tuple[str, str, str], str], list[_Planned]] = {}
        for plan in to_read:  # sources sharing a ledger (one dataset) are read together
            groups.setdefault((plan.session_key, plan.sink), []).append(plan)
        keys = list(groups)
        answers = map_by_database(
            [key[0] for key in keys],
            lambda g: _read_together(registry, config, groups[keys[g]], query),
        )
        by_source = {s.source: s for statuses in answers for s in statuses}
        return [p if isinstance(p, SourceStatus) else by_source[p.source] for p in planned]


@dataclass(frozen=True)
class _Planned:
    """A source whose ledger is to be read: where, with which sink, over which session."""

    source: str
    where: Target
    sink: str
    reader: Any
    session_key: tuple[str, str, str]


def _plan(
    registry: PluginRegistry,
    config: ProjectConfig,
    pool: SessionPool,
    source: str,
    dataset: str | None,
) -> SourceStatus | _Planned:
    """Everything before the read: a final status when there is nothing to read."""
    try:
        where = resolve_destination(config, source, dataset)
    except DltOpsError as exc:
        return SourceStatus(source, "unreadable", str(exc))
    try:  # resolving the target loads the adapter plugin, here on the calling thread
        ledger = source_ledger(registry, config, where, pool)
    except DltOpsError as exc:
        return SourceStatus(source, "unreadable", summarize_error(exc))
    readers = ledger.with_method("read_runs")
    if not readers:
        if not ledger.has_adapter:
            return _without_adapter(source, where.engine)
        return SourceStatus(
            source, "unreadable", "no readable ledger sink in [dlt_ops] ledger_sinks"
        )
    name, reader = readers[0]
    return _Planned(source, ledger.where, name, reader, reading_lane(registry, pool, ledger))


def _read_together(
    registry: PluginRegistry, config: ProjectConfig, plans: list[_Planned], query: LedgerQuery
) -> list[SourceStatus]:
    """Every source of one ledger: one read for all where the sink can (``read_runs_many``),
    so a dataset a thousand sources share costs a few round-trips, not a thousand; a failed
    shared read is retried source by source, which says which ledger is broken and why."""
    many = getattr(plans[0].reader, "read_runs_many", None)
    if len(plans) == 1 or many is None:
        return [_read(registry, config, plan, query) for plan in plans]
    try:
        found = many([plan.source for plan in plans], query)
    except Exception:  # diagnose one by one, as status always did
        return [_read(registry, config, plan, query) for plan in plans]
    return [_status(config, plan, None if found is None else found[plan.source]) for plan in plans]


def _read(
    registry: PluginRegistry, config: ProjectConfig, plan: _Planned, query: LedgerQuery
) -> SourceStatus:
    source = plan.source
    try:
        runs = plan.reader.read_runs(LedgerQuery(**{**query.__dict__, "source": source}))
    except Exception as exc:  # status diagnoses a broken ledger, it never dies on one
        log.debug("status.read_failed", source=source, sink=plan.sink, error=summarize_error(exc))
        live = _live_run_holding_the_file(registry, config, plan.where, source, query)
        if live is not None:
            return live
        return SourceStatus(source, "unreadable", summarize_error(exc))
    return _status(config, plan, runs)


def _status(config: ProjectConfig, plan: _Planned, runs: list[RunRecord] | None) -> SourceStatus:
    """A source's status from what its ledger returned (``None``: no ledger table)."""
    source = plan.source
    if runs is None:
        return SourceStatus(source, "missing")
    # a row whose run kept its finish in the outbox (the ledger could not take it) shows as
    # that finish: failed, with its own cause; the next run writes it to the row
    from dlt_ops.ledger import outbox

    runs = outbox.overlay(config.root, runs, source, dataset=plan.where.dataset)
    return SourceStatus(source, "ok", runs=runs)


def _live_run_holding_the_file(
    registry: PluginRegistry,
    config: ProjectConfig,
    where: Target,
    source: str,
    query: LedgerQuery,
) -> SourceStatus | None:
    """A single-writer database stays busy while dlt loads into it, longer than a reader waits.
    The run holding it left a note in its lock file: while that process lives, show the run as
    ``running`` from the note (the history shows again once the run lets go of the file)."""
    from dlt_ops.project.run_locks import live_note, lock_file

    if query.resource is not None or query.status not in (None, RunStatus.running):
        return None  # the note cannot say which resource a run is scoped to
    if not where.single_writer:
        return None
    note = live_note(lock_file(config, where, source))
    if note is None or note.run_id is None or note.started_at is None:
        return None
    if query.since is not None and note.started_at < query.since:
        return None
    _, _, backfill = note.holder.partition("backfill:")  # chunks share the lock as backfill:<id>
    run = RunRecord(
        pipeline_name=where.pipeline_name, source_section=source, resource_name=None,
        destination=where.engine, dataset=where.dataset, run_id=note.run_id, dlt_run_id=None,
        backfill_id=backfill or None, trigger_source=note.trigger or "-",
        started_at=note.started_at, completed_at=None, status=RunStatus.running,
        records_extracted=None, records_loaded=None, error_summary=None,
        host=note.host, pid=note.pid,
        heartbeat_at=utcnow(),
    )  # fmt: skip
    return SourceStatus(source, "ok", runs=[run], note=(
        f"the database file is busy: run {note.run_id[:12]} (pid {note.pid}) holds it; older "
        f"runs show once it lets go"))  # fmt: skip


def unreadable(statuses: Iterable[SourceStatus]) -> list[SourceStatus]:
    """Sources whose ledger could not be read (an outage is never an empty history)."""
    return [s for s in statuses if s.ledger == "unreadable"]


def unreadable_error(statuses: Iterable[SourceStatus]) -> LedgerUnreadableError:
    """One error naming every unreadable source and its reason."""
    found = unreadable(statuses)
    return LedgerUnreadableError(
        "; ".join(f"ledger of '{s.source}' unreadable: {s.error}" for s in found)
    )


def newest_failed(statuses: Iterable[SourceStatus]) -> list[str]:
    """Sources whose newest run failed."""
    return [s.source for s in statuses if s.runs and s.runs[0].status == RunStatus.failed]


#: Newest rows read per source for its freshness (a completed one among them, usually).
FRESHNESS_RECENT = 20


def collect_freshness(
    registry: PluginRegistry,
    config: ProjectConfig,
    sources: Iterable[str],
    now: datetime,
    *,
    dataset: str | None = None,
) -> dict[str, Freshness | None]:
    """Each source's freshness verdict from its own ledger, whatever a listing's filters;
    ``None`` where the ledger cannot be read (unknown, never "no successful run")."""
    from dlt_ops.ledger.freshness import freshness_of

    sources = list(sources)
    recent = collect_status(registry, config, sources, LedgerQuery("", limit=FRESHNESS_RECENT),
                            dataset=dataset)  # fmt: skip
    runs: dict[str, list[RunRecord] | None] = {
        s.source: list(s.runs) if s.ledger in ("ok", "missing") else None for s in recent
    }
    _add_newest_success(registry, config, runs, FRESHNESS_RECENT, dataset)
    return {n: freshness_of(config, n, r, now) if r is not None else None for n, r in runs.items()}


def _add_newest_success(
    registry: PluginRegistry,
    config: ProjectConfig,
    runs: dict[str, list[RunRecord] | None],
    page: int,
    dataset: str | None,
) -> None:
    """Where a full page of rows (``page``) holds no completed run, the newest completed run is
    older than the rows read: ask for it by itself and add it."""
    from dlt_ops.ledger.freshness import last_success

    deeper = [n for n, r in runs.items() if r is not None and len(r) >= page
              and last_success(r) is None]  # fmt: skip
    if deeper:
        query = LedgerQuery("", status=RunStatus.completed, limit=1)
        for s in collect_status(registry, config, deeper, query, dataset=dataset):
            found = runs[s.source]
            if found is not None:
                found.extend(s.runs)


def freshness_for(
    registry: PluginRegistry,
    config: ProjectConfig,
    statuses: list[SourceStatus],
    now: datetime,
    query: LedgerQuery,
    *,
    dataset: str | None = None,
) -> dict[str, Freshness | None]:
    """Every listed source's verdict (``None``: its ledger could not be read), for ``status``
    and the report. A source with an SLA or a schedule is judged by its newest success whatever
    the listing's ``query``: a filtered listing's rows cannot say, so it gets its own read;
    an unfiltered one's rows serve, plus the newest completed row when a full page held none."""
    from dlt_ops.cron import cron_text
    from dlt_ops.ledger.freshness import freshness_of

    readable = [s for s in statuses if s.ledger in ("ok", "missing")]
    filtered = query.status is not None or query.since is not None or query.resource is not None
    judged = set()
    for s in readable:
        cfg = config.source(s.source)
        if cfg.freshness is not None or (cfg.schedule_valid and cron_text(cfg.schedule)):
            judged.add(s.source)
    own = sorted(judged) if filtered else []
    runs: dict[str, list[RunRecord] | None] = {
        s.source: list(s.runs) for s in readable if s.source not in own
    }
    _add_newest_success(registry, config, {n: runs[n] for n in judged if n in runs},
                        query.limit or FRESHNESS_RECENT, dataset)  # fmt: skip
    found: dict[str, Freshness | None] = {s.source: None for s in statuses}
    found.update({n: freshness_of(config, n, r, now) for n, r in runs.items() if r is not None})
    if own:
        found.update(collect_freshness(registry, config, own, now, dataset=dataset))
    return found


def slots_for(
    config: ProjectConfig,
    statuses: Iterable[SourceStatus],
    verdicts: dict[str, Freshness | None],
    now: datetime,
) -> dict[str, Slots | None]:
    """Each source's schedule slots: its verdict's where it has one, else from the config."""
    from dlt_ops.ledger.freshness import slots_of

    return {
        s.source: v.slots if (v := verdicts.get(s.source)) is not None
        else slots_of(config, s.source, now)
        for s in statuses
    }  # fmt: skip


def is_stale(
    status: SourceStatus,
    verdict: Freshness | None,
    now: datetime,
    staleness_days: int,
    heartbeat_s: float,
) -> bool:
    """Stale: the newest run is abandoned; or the freshness SLA's error level is missed (an SLA
    decides alone); or, without one, the source is overdue by its schedule; or, with neither,
    its newest run started more than ``staleness_days`` ago."""
    newest = status.runs[0] if status.runs else None
    if newest is not None and is_abandoned(newest, now, heartbeat_s):
        return True
    if verdict is not None and verdict.sla is not None:
        return verdict.stale
    if verdict is not None and verdict.slots is not None:
        return verdict.overdue
    return newest is not None and newest.started_at < now - timedelta(days=staleness_days)


def stale_by_freshness(
    statuses: Iterable[SourceStatus],
    freshness: dict[str, Freshness | None],
    now: datetime,
    staleness_days: int,
    heartbeat_s: float,
) -> list[str]:
    """``--fail-on stale``: the sources :func:`is_stale` calls stale."""
    return [s.source for s in statuses
            if is_stale(s, freshness.get(s.source), now, staleness_days, heartbeat_s)]  # fmt: skip


def problems_first(statuses: Iterable[SourceStatus], stale: Iterable[str]) -> list[SourceStatus]:
    """What an operator looks at first: sources whose newest run failed or whose ledger could
    not be read, then the ``stale`` ones, then the rest (each group in the order given)."""
    stale = set(stale)

    def rank(s: SourceStatus) -> int:
        if s.ledger in ("unreadable", "unsupported") or (s.runs and s.runs[0].status == "failed"):
            return 0
        return 1 if s.source in stale else 2

    return sorted(statuses, key=rank)


__all__ = [
    "SourceStatus",
    "collect_freshness",
    "collect_status",
    "freshness_for",
    "is_abandoned",
    "is_stale",
    "newest_failed",
    "problems_first",
    "shown_status",
    "slots_for",
    "stale_by_freshness",
    "unreadable",
    "unreadable_error",
    "utcnow",
]
