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
    from dlt_ops.receipts.model import ReceiptRow
    from dlt_ops.receipts.store import SourceRows
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


def _cost(rows: list[ReceiptRow]) -> dict[str, float]:
    """Dollars per basis over every receipt row of a source (a mixed row counts in both)."""
    totals: dict[str, float] = {}
    for row in rows:
        for basis, part in (("measured", row.cost_measured), ("estimated", row.cost_estimated)):
            if part is not None:
                totals[basis] = totals.get(basis, 0.0) + part
    return totals


class _Costs:
    """Receipts read once per database and dataset for all its sources (a read per source
    was a column lookup and a query each: O(sources) statements on one shared dataset)."""

    def __init__(
        self,
        config: ProjectConfig,
        pool: SessionPool,
        sources: dict[tuple[str, str, str], list[str]],
    ) -> None:
        self.config, self.pool, self.sources = config, pool, sources
        self.by_key: dict[tuple[str, str, str], SourceRows] = {}

    def of(self, where: Target, source: str) -> dict[str, float]:
        from dlt_ops.receipts.service import project_stores
        from dlt_ops.receipts.store import first_store_rows

        if where.key not in self.by_key:
            stores = project_stores(self.config, where, open_session=lambda: self.pool.get(where))
            self.by_key[where.key] = first_store_rows(
                stores,
                self.sources[where.key],
                lambda store, wanted: _by_source(store.read_sources(wanted)),
            )
        rows = self.by_key[where.key][source]
        if isinstance(rows, Exception):
            raise rows
        return _cost(rows)


def _by_source(rows: list[ReceiptRow]) -> dict[str, list[ReceiptRow]]:
    out: dict[str, list[ReceiptRow]] = {}
    for row in rows:
        out.setdefault(row.source_section, []).append(row)
    return out


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


def _targets(
    config: ProjectConfig, pool: SessionPool, sources: list[str]
) -> dict[str, Target | None]:
    """Each source's target (``None``: it cannot be resolved; the ledger state says why)."""
    from dlt_ops.destinations import resolve_destination

    out: dict[str, Target | None] = {}
    for source in sources:
        try:
            out[source] = pool.target(resolve_destination(config, source))
        except DltOpsError:
            out[source] = None
    return out


def _from_destination(
    where: Target | None, costs: _Costs, chunks: _Chunks, out: SourceMetrics
) -> None:
    if where is None:
        out.cost = out.chunks = None
        return  # the ledger state already says why
    try:  # receipts may live in the jsonl file even on a core-tier destination
        out.cost = costs.of(where, out.source)
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
    from dlt_ops.target import resolving_once

    with resolving_once():  # two pools read the fleet: each target resolved once
        return _collect_fleet(registry, config, sources, now)


def _collect_fleet(
    registry: PluginRegistry, config: ProjectConfig, sources: list[str], now: datetime
) -> FleetMetrics:
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
        targets = _targets(config, pool, [m.source for m in out])
        by_key: dict[tuple[str, str, str], list[str]] = {}
        for source, where in targets.items():
            if where is not None:
                by_key.setdefault(where.key, []).append(source)
        chunks, costs = _Chunks(pool), _Costs(config, pool, by_key)
        for metrics in out:
            _from_destination(targets[metrics.source], costs, chunks, metrics)
    for metrics in out:
        for problem in metrics.problems:
            log.warning("metrics.part_unreadable", source=metrics.source, problem=problem)
    return FleetMetrics(config.root.name, now, out)
