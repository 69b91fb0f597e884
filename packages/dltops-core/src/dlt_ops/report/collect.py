"""What the fleet report shows, read from the ledgers only (never a source module, never dlt).

Per source: the runs ledger's newest runs, the backfill chunks in ``_dlt_backfills``, the
receipts of those runs, and the open drift rows in ``_dlt_ops_drift``. Each read is on its own:
one that fails makes that part *unreadable* (named in the report), never an empty history.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from dlt_ops.errors import DltOpsError
from dlt_ops.ledger.model import RunRecord, RunStatus, summarize_error

if TYPE_CHECKING:
    from dlt_ops.backfill.state import ChunkRow
    from dlt_ops.config import ProjectConfig
    from dlt_ops.ledger.freshness import Freshness, Slots
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.receipts.model import ReceiptRow
    from dlt_ops.target import Target
    from dlt_ops.target.sessions import SessionPool


@dataclass(frozen=True)
class RunView:
    """One run as the report draws it; ``outcome`` adds ``abandoned`` to the ledger statuses."""

    run: RunRecord
    outcome: str

    @property
    def duration_s(self) -> float | None:
        """Seconds from start to end (``None`` while it runs)."""
        end = self.run.completed_at
        return (end - self.run.started_at).total_seconds() if end is not None else None


@dataclass(frozen=True)
class DriftRow:
    """An open ``_dlt_ops_drift`` row."""

    table: str
    column: str
    kind: str
    first_seen_at: datetime
    acknowledged: bool


@dataclass
class Totals:
    """Receipt sums over the runs shown."""

    records_in: int = 0
    loaded: int = 0
    filtered: int = 0
    rejected: int = 0
    warned: int = 0
    failed: int = 0
    cost: float | None = None

    def add(self, row: ReceiptRow) -> None:
        """Fold one receipt row in."""
        self.records_in += row.records_in
        self.loaded += row.rows_loaded + row.child_rows_loaded
        self.filtered += row.filtered
        self.rejected += row.rejected
        self.warned += row.warned
        self.failed += row.failed
        if row.cost is not None:
            self.cost = (self.cost or 0.0) + row.cost


@dataclass
class SourceView:
    """Everything the report says about one source."""

    name: str
    destination: str = "-"
    dataset: str = "-"
    ledger: str = "ok"  # ok | missing | unreadable | unsupported
    error: str | None = None
    runs: list[RunView] = field(default_factory=list)
    stale: bool = False
    #: the freshness verdict (``None``: the ledger could not be read)
    freshness: Freshness | None = None
    #: where its schedule stands (``None``: no schedule, or ``@manual``)
    slots: Slots | None = None
    backfills: dict[str, list[ChunkRow]] = field(default_factory=dict)
    totals: Totals = field(default_factory=Totals)
    drift: list[DriftRow] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def newest(self) -> RunView | None:
        """The newest run, if any."""
        return self.runs[0] if self.runs else None

    @property
    def known(self) -> bool:
        """Its runs ledger was read (its counts mean something)."""
        return self.ledger in ("ok", "missing")


@dataclass
class FleetReport:
    """The whole report: when, which project, each source."""

    project: str
    generated_at: datetime
    staleness_days: int
    sources: list[SourceView]

    @property
    def unreadable(self) -> list[str]:
        """One line per part of a ledger that could not be read."""
        out = [f"{s.name}: runs ledger {s.ledger}: {s.error}" for s in self.sources
               if s.ledger in ("unreadable", "unsupported")]  # fmt: skip
        out += [f"{s.name}: {p}" for s in self.sources for p in s.problems]
        return out

    @property
    def nothing_read(self) -> bool:
        """No source's runs ledger could be read (an outage, not an empty fleet)."""
        return bool(self.sources) and not any(s.known for s in self.sources)


def _outcome(run: RunRecord, now: datetime, heartbeat_s: float) -> str:
    from dlt_ops.ledger.status import is_abandoned

    if is_abandoned(run, now, heartbeat_s):
        return "abandoned"
    if run.status == RunStatus.failed and (run.error_summary or "").startswith("abandoned"):
        return "abandoned"  # closed by a later run: its process had died
    return str(run.status)


def collect(
    registry: PluginRegistry,
    config: ProjectConfig,
    sources: list[str],
    now: datetime,
    *,
    limit: int = 30,
) -> FleetReport:
    """Read every source's ledgers (one session per destination and dataset); sources whose
    newest run failed or whose ledger could not be read come first, then stale ones."""
    from dlt_ops.ledger.sinks import LedgerQuery
    from dlt_ops.ledger.status import (
        collect_status,
        freshness_for,
        is_stale,
        problems_first,
        slots_for,
    )
    from dlt_ops.target.sessions import SessionPool

    query = LedgerQuery("", limit=limit)
    statuses = collect_status(registry, config, sources, query)
    verdicts = freshness_for(registry, config, statuses, now, query)
    stale = {s.source for s in statuses if is_stale(s, verdicts.get(s.source), now,
                                                    config.staleness_days,
                                                    config.heartbeat_seconds)}  # fmt: skip
    slots = slots_for(config, statuses, verdicts, now)
    views = []
    with SessionPool(registry, config) as pool:
        for status in problems_first(statuses, stale):
            view = SourceView(status.source, ledger=status.ledger, error=status.error)
            view.runs = [RunView(r, _outcome(r, now, config.heartbeat_seconds))
                         for r in status.runs]  # fmt: skip
            view.freshness = verdicts.get(status.source)
            view.slots = slots[status.source]
            view.stale = status.source in stale
            _fill_from_destination(registry, config, pool, view)
            views.append(view)
    return FleetReport(config.root.name, now, config.staleness_days, views)


def _fill_from_destination(
    registry: PluginRegistry, config: ProjectConfig, pool: SessionPool, view: SourceView
) -> None:
    from dlt_ops.destinations import resolve_destination

    try:
        where = pool.target(resolve_destination(config, view.name))
    except DltOpsError:
        return  # the runs ledger already says why
    view.destination, view.dataset = where.engine, where.dataset
    if not where.has_adapter or view.ledger == "unreadable":
        return  # core tier: no dlt-ops tables there; unreadable: the runs ledger says why
    for part, read in (("backfill state", _backfills), ("receipts", _receipts),
                       ("drift state", _drift)):  # fmt: skip
        try:
            read(registry, config, pool, where, view)
        except Exception as exc:  # a part that cannot be read is named, never empty
            view.problems.append(f"{part} unreadable: {summarize_error(exc)}")


def _backfills(
    registry: PluginRegistry, config: ProjectConfig, pool: SessionPool,
    where: Target, view: SourceView,
) -> None:  # fmt: skip
    from dlt_ops.backfill.state import BackfillState

    state = BackfillState(pool.get(where), "report")
    if not state.exists():
        return
    for row in state.all_rows():
        if row.source_section == view.name:
            view.backfills.setdefault(row.backfill_id, []).append(row)
    for rows in view.backfills.values():
        rows.sort(key=lambda r: r.chunk_from)


def _receipts(
    registry: PluginRegistry, config: ProjectConfig, pool: SessionPool,
    where: Target, view: SourceView,
) -> None:  # fmt: skip
    from dlt_ops.receipts.service import project_stores

    stores = project_stores(config, where, open_session=lambda: pool.get(where))
    run_ids = list(dict.fromkeys(v.run.run_id for v in view.runs))
    for store in stores:
        rows = [r for run_id in run_ids for r in store.read(run_id)
                if r.source_section == view.name]  # fmt: skip
        if rows:
            for row in rows:
                view.totals.add(row)
            return


def _drift(
    registry: PluginRegistry, config: ProjectConfig, pool: SessionPool,
    where: Target, view: SourceView,
) -> None:  # fmt: skip
    from dlt_ops.reconcile.state import DRIFT_TABLE_NAME, SELECT

    session = pool.get(where)
    if session.fetch_columns(DRIFT_TABLE_NAME) is None:
        return
    rows: list[Any] = session.query(SELECT, view.name)
    view.drift = [DriftRow(t, c, k, first, acked is not None)
                  for t, c, k, first, acked, resolved in rows if resolved is None]  # fmt: skip
