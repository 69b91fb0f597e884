"""The fleet as numbers: per source, what its ledger, receipts and backfill state say.

Read through the same readers ``pipeline status`` and the report use
(:func:`~dlt_ops.ledger.status.collect_status`, the receipt stores of
:mod:`dlt_ops.receipts.service`, one :class:`~dlt_ops.target.sessions.SessionPool`), never a
source module or dlt. A part that cannot be read is recorded as such, never as zero.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from dlt_ops.errors import DltOpsError
from dlt_ops.ledger.model import RunRecord, RunStatus, summarize_error
from dlt_ops.log import get_logger

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig
    from dlt_ops.ledger.freshness import Freshness
    from dlt_ops.ledger.status import SourceStatus
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.target import Target
    from dlt_ops.target.sessions import SessionPool

log = get_logger(__name__)

#: every run of a source is read: the counts are the ledger's, not its newest page
ALL_RUNS = 1_000_000_000


@dataclass
class SourceMetrics:
    """One source's figures."""

    source: str
    ledger: str  # ok | missing | unreadable | unsupported (as `pipeline status` says)
    error: str | None = None
    runs_by_status: Counter[str] = field(default_factory=Counter)
    newest: RunRecord | None = None
    newest_outcome: str | None = None
    last_success: RunRecord | None = None
    rows_loaded: int = 0
    running: int = 0
    abandoned: int = 0
    #: basis (measured, estimated) → dollars, from the receipts; ``None``: receipts unreadable
    cost: dict[str, float] | None = field(default_factory=dict)
    #: (backfill_id, chunk status) → chunks; ``None``: backfill state unreadable
    chunks: Counter[tuple[str, str]] | None = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    #: the freshness verdict `pipeline status` gives (``None``: the ledger was not read)
    freshness: Freshness | None = None


@dataclass
class FleetMetrics:
    """Every source's figures, as of ``now``."""

    project: str
    now: datetime
    sources: list[SourceMetrics]


def _outcome(run: RunRecord, now: datetime, heartbeat_s: float) -> str:
    from dlt_ops.ledger.status import is_abandoned

    return "abandoned" if is_abandoned(run, now, heartbeat_s) else str(run.status)


def _from_ledger(status: SourceStatus, now: datetime, heartbeat_s: float) -> SourceMetrics:
    from dlt_ops.ledger.status import is_abandoned

    out = SourceMetrics(status.source, status.ledger, status.error)
    runs = status.runs  # newest first
    for run in runs:
        out.runs_by_status[str(run.status)] += 1
        out.rows_loaded += run.records_loaded or 0  # set by the attempt that loaded, only
        if run.status == RunStatus.running:
            if is_abandoned(run, now, heartbeat_s):
                out.abandoned += 1
            else:
                out.running += 1
    if runs:
        out.newest = runs[0]
        out.newest_outcome = _outcome(runs[0], now, heartbeat_s)
    out.last_success = next((r for r in runs if r.status == RunStatus.completed), None)
    return out


def _cost(config: ProjectConfig, pool: SessionPool, where: Target, source: str) -> dict[str, float]:
    """Dollars per basis over every receipt row of ``source`` (a mixed row counts in both)."""
    from dlt_ops.receipts.service import project_stores

    totals: dict[str, float] = {}
    for store in project_stores(config, where, open_session=lambda: pool.get(where)):
        rows = store.read_source(source)
        if not rows:
            continue
        for row in rows:
            for basis, part in (("measured", row.cost_measured), ("estimated", row.cost_estimated)):
                if part is not None:
                    totals[basis] = totals.get(basis, 0.0) + part
        break  # the first store that has the source's receipts, as `runs show` reads them
    return totals


class _Chunks:
    """``_dlt_backfills`` read once per database and dataset, shared by its sources."""

    def __init__(self, pool: SessionPool) -> None:
        self.pool = pool
        self.by_key: dict[tuple[str, str, str], Counter[tuple[str, str, str]]] = {}

    def of(self, where: Target, source: str) -> Counter[tuple[str, str]]:
        from dlt_ops.backfill.state import BackfillState

        if where.key not in self.by_key:
            state = BackfillState(self.pool.get(where), "metrics")
            rows = state.all_rows() if state.exists() else []
            self.by_key[where.key] = Counter(
                (r.source_section, r.backfill_id, str(r.status)) for r in rows
            )
        return Counter({(b, st): n for (s, b, st), n in self.by_key[where.key].items()
                        if s == source})  # fmt: skip


def _from_destination(
    config: ProjectConfig, pool: SessionPool, chunks: _Chunks, out: SourceMetrics
) -> None:
    from dlt_ops.destinations import resolve_destination

    try:
        where = pool.target(resolve_destination(config, out.source))
    except DltOpsError:
        out.cost = out.chunks = None
        return  # the ledger state already says why
    try:  # receipts may live in the jsonl file even on a core-tier destination
        out.cost = _cost(config, pool, where, out.source)
    except Exception as exc:  # a part that cannot be read is named, never zero
        out.problems.append(f"receipts unreadable: {summarize_error(exc)}")
        out.cost = None
    if not where.has_adapter or out.ledger == "unreadable":
        out.chunks = None  # core tier: no backfill table; unreadable: the ledger says why
        return
    try:
        out.chunks = chunks.of(where, out.source)
    except Exception as exc:
        out.problems.append(f"backfill state unreadable: {summarize_error(exc)}")
        out.chunks = None


def collect_fleet(
    registry: PluginRegistry, config: ProjectConfig, sources: list[str], now: datetime
) -> FleetMetrics:
    """Every source's figures (one session per destination and dataset)."""
    from dlt_ops.ledger.sinks import LedgerQuery
    from dlt_ops.ledger.status import collect_status
    from dlt_ops.target.sessions import SessionPool

    statuses = collect_status(registry, config, sources, LedgerQuery("", limit=ALL_RUNS))
    from dlt_ops.ledger.freshness import freshness_of

    out = [_from_ledger(s, now, config.heartbeat_seconds) for s in statuses]
    for metrics, status in zip(out, statuses, strict=True):
        if metrics.ledger in ("ok", "missing"):  # every row was read: the verdict status gives
            metrics.freshness = freshness_of(config, metrics.source, status.runs, now)
    with SessionPool(registry, config) as pool:
        chunks = _Chunks(pool)
        for metrics in out:
            _from_destination(config, pool, chunks, metrics)
    for metrics in out:
        for problem in metrics.problems:
            log.warning("metrics.part_unreadable", source=metrics.source, problem=problem)
    return FleetMetrics(config.root.name, now, out)
