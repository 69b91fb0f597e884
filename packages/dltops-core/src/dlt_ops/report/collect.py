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
    from dlt_ops.receipts.store import ReceiptStore, SourceRows
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
    from dlt_ops.target import resolving_once

    with resolving_once():  # several pools read the fleet: each target resolved once
        return _collect(registry, config, sources, now, limit=limit)


def _collect(
    registry: PluginRegistry,
    config: ProjectConfig,
    sources: list[str],
    now: datetime,
    *,
    limit: int = 30,
) -> FleetReport:
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
    for status in problems_first(statuses, stale):
        view = SourceView(status.source, ledger=status.ledger, error=status.error)
        view.runs = [RunView(r, _outcome(r, now, config.heartbeat_seconds))
                     for r in status.runs]  # fmt: skip
        view.freshness = verdicts.get(status.source)
        view.slots = slots[status.source]
        view.stale = status.source in stale
        views.append(view)
    with SessionPool(registry, config) as pool:
        parts = _DatasetParts(config, pool, views)
        for view in views:
            parts.fill(view)
    return FleetReport(config.root.name, now, config.staleness_days, views)


class _DatasetParts:
    """``_dlt_backfills``, the receipts and ``_dlt_ops_drift`` read once per database and
    dataset for all its sources (a read per source was a column lookup or more each:
    O(sources) statements on one shared dataset). A part that raised raises for each source."""

    def __init__(self, config: ProjectConfig, pool: SessionPool, views: list[SourceView]) -> None:
        self.config, self.pool = config, pool
        self.views: dict[tuple[str, str, str], list[SourceView]] = {}
        self.read: dict[tuple[tuple[str, str, str], str], Any] = {}
        # resolved once per source here; ``fill`` reuses it
        self.targets = {view.name: self._target(view) for view in views}
        for view in views:
            where = self.targets[view.name]
            if where is not None and where.has_adapter and view.ledger != "unreadable":
                self.views.setdefault(where.key, []).append(view)

    def _target(self, view: SourceView) -> Target | None:
        from dlt_ops.destinations import resolve_destination

        try:
            return self.pool.target(resolve_destination(self.config, view.name))
        except DltOpsError:
            return None

    def part(self, where: Target, part: str, read: Any) -> Any:
        """``read(where, views)`` once per dataset; what it raised is raised again."""
        key = (where.key, part)
        if key not in self.read:
            try:
                self.read[key] = read(where, self.views[where.key])
            except Exception as exc:
                self.read[key] = exc
        found = self.read[key]
        if isinstance(found, Exception):
            raise found
        return found

    def fill(self, view: SourceView) -> None:
        where = self.targets[view.name]
        if where is None:
            return  # the runs ledger already says why
        view.destination, view.dataset = where.engine, where.dataset
        if not where.has_adapter or view.ledger == "unreadable":
            return  # core tier: no dlt-ops tables there; unreadable: the runs ledger says why
        for part, read, apply in (("backfill state", self._backfills, _apply_backfills),
                                  ("receipts", self._receipts, _apply_receipts),
                                  ("drift state", self._drift, _apply_drift)):  # fmt: skip
            try:
                apply(view, self.part(where, part, read))
            except Exception as exc:  # a part that cannot be read is named, never empty
                view.problems.append(f"{part} unreadable: {summarize_error(exc)}")

    def _backfills(self, where: Target, views: list[SourceView]) -> list[ChunkRow]:
        from dlt_ops.backfill.state import BackfillState

        state = BackfillState(self.pool.get(where), "report")
        return state.all_rows() if state.exists() else []

    def _receipts(self, where: Target, views: list[SourceView]) -> SourceRows:
        from dlt_ops.receipts.service import project_stores
        from dlt_ops.receipts.store import first_store_rows

        run_ids = {v.name: list(dict.fromkeys(r.run.run_id for r in v.runs)) for v in views}

        def read(store: ReceiptStore, sources: list[str]) -> dict[str, list[ReceiptRow]]:
            by_run: dict[tuple[str, str], list[ReceiptRow]] = {}
            for row in store.read_runs([i for s in sources for i in run_ids[s]]):
                by_run.setdefault((row.source_section, row.run_id), []).append(row)
            # each source's rows in the order its runs are shown, as a read per run gave them
            return {s: [r for i in run_ids[s] for r in by_run.get((s, i), ())] for s in sources}

        stores = project_stores(self.config, where, open_session=lambda: self.pool.get(where))
        return first_store_rows(stores, list(run_ids), read)

    def _drift(self, where: Target, views: list[SourceView]) -> dict[str, list[DriftRow]]:
        from dlt_ops.reconcile.state import DRIFT_TABLE_NAME, SELECT_ALL

        session = self.pool.get(where)
        out: dict[str, list[DriftRow]] = {}
        if session.fetch_columns(DRIFT_TABLE_NAME) is None:
            return out
        rows: list[Any] = session.query(SELECT_ALL)
        for source, t, c, k, first, acked, resolved in rows:
            if resolved is None:
                out.setdefault(source, []).append(DriftRow(t, c, k, first, acked is not None))
        return out


def _apply_backfills(view: SourceView, rows: list[ChunkRow]) -> None:
    for row in rows:
        if row.source_section == view.name:
            view.backfills.setdefault(row.backfill_id, []).append(row)
    for chunks in view.backfills.values():
        chunks.sort(key=lambda r: r.chunk_from)


def _apply_receipts(view: SourceView, by_source: SourceRows) -> None:
    rows = by_source[view.name]
    if isinstance(rows, Exception):
        raise rows
    for row in rows:
        view.totals.add(row)


def _apply_drift(view: SourceView, by_source: dict[str, list[DriftRow]]) -> None:
    view.drift = list(by_source.get(view.name, ()))
