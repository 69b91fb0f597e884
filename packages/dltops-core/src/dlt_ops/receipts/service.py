"""Finding runs and their receipts across every ledger the project's sources write to."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from dlt_ops.adapters import DestinationSession
from dlt_ops.config import ProjectConfig
from dlt_ops.destinations import ResolvedDestination, resolve_destination
from dlt_ops.errors import DltOpsError, LedgerUnreadableError, UsageError
from dlt_ops.ledger import outbox
from dlt_ops.ledger.jsonl_sink import jsonl_path
from dlt_ops.ledger.model import RunRecord, summarize_error
from dlt_ops.ledger.readers import source_ledger
from dlt_ops.ledger.sinks import LedgerQuery
from dlt_ops.ledger.status import collect_status, unreadable, unreadable_error
from dlt_ops.plugins import PluginRegistry
from dlt_ops.receipts.model import ReceiptRow
from dlt_ops.receipts.store import ReceiptStore, receipt_stores
from dlt_ops.target import Target
from dlt_ops.target.sessions import SessionPool


@dataclass
class RunReport:
    """A run's ledger rows (one per attempt, newest first) and its receipt rows."""

    attempts: list[RunRecord]
    receipts: list[ReceiptRow] = field(default_factory=list)

    @property
    def latest(self) -> RunRecord:
        """The newest attempt."""
        return self.attempts[0]

    def latest_receipts(self) -> list[ReceiptRow]:
        """Receipt rows of the newest attempt only."""
        started = self.latest.started_at
        return [r for r in self.receipts if r.run_started_at == started]


def newest_runs(
    registry: PluginRegistry,
    config: ProjectConfig,
    sources: list[str],
    limit: int,
    *,
    dataset: str | None = None,
) -> list[RunRecord]:
    """The ``limit`` newest runs across ``sources``, newest first; raises
    ``LedgerUnreadableError`` when a ledger could not be read (an outage is not "no runs")."""
    statuses = collect_status(registry, config, sources, LedgerQuery("", limit=limit),
                              dataset=dataset)  # fmt: skip
    if unreadable(statuses):
        raise unreadable_error(statuses)
    runs = [run for s in statuses for run in s.runs]
    return sorted(runs, key=lambda r: r.started_at, reverse=True)[:limit]


def find_run(
    registry: PluginRegistry,
    config: ProjectConfig,
    sources: list[str],
    ref: str,
    *,
    dataset: str | None = None,
) -> RunReport:
    """``ref`` is a run id, a unique run-id prefix of at least 8 characters, or ``last``."""
    if ref != "last" and len(ref) < 8:
        raise UsageError(f"run id '{ref}' is too short: give at least 8 characters, or 'last'.")
    if ref == "last":
        latest = newest_runs(registry, config, sources, 1, dataset=dataset)
        if not latest:
            raise UsageError("no runs recorded for the selected source(s) yet.")
        ref, sources = latest[0].run_id, [latest[0].source_section]
    failures: list[str] = []
    with SessionPool(registry, config) as pool:
        for source in sorted(sources):
            report = _find_in(registry, config, pool, source, ref, dataset, failures)
            if report is not None:
                return report
    if failures:  # the run may be in a ledger we could not read: say so, not "no run"
        raise LedgerUnreadableError(f"run '{ref}' not found; " + "; ".join(failures))
    raise UsageError(f"no run '{ref}' in the ledgers of: {', '.join(sorted(sources))}.")


def _find_in(
    registry: PluginRegistry,
    config: ProjectConfig,
    pool: SessionPool,
    source: str,
    ref: str,
    dataset: str | None = None,
    failures: list[str] | None = None,
) -> RunReport | None:
    failures = [] if failures is None else failures
    try:
        where = resolve_destination(config, source, dataset)
    except DltOpsError as exc:
        failures.append(f"ledger of '{source}' unreadable: {exc}")
        return None
    ledger = source_ledger(registry, config, where, pool)
    for _, sink in ledger.with_method("read_run"):
        try:
            attempts = [r for r in sink.read_run(ref) if r.source_section == source]  # type: ignore[attr-defined]
        except Exception as exc:  # an unreachable ledger cannot show the run; try the next one
            failures.append(f"ledger of '{source}' unreadable: {summarize_error(exc)}")
            continue
        if attempts:
            ids = {r.run_id for r in attempts}
            if len(ids) > 1:
                raise UsageError(f"run id prefix '{ref}' is ambiguous: {', '.join(sorted(ids))}.")
            stores = project_stores(config, ledger.where, open_session=lambda: pool.get(where))
            receipts = _read(stores, [attempts[0].run_id], source)
            shown = outbox.overlay(config.root, attempts, source, dataset=where.dataset)
            return RunReport(shown, receipts)
    return None


def project_stores(
    config: ProjectConfig, target: Target, *, open_session: Callable[[], DestinationSession]
) -> list[ReceiptStore]:
    """The receipt stores of a source in ``target``: its destination's ``_dlt_ops_receipts``
    wherever it has an adapter, whatever the ledger sinks, and the jsonl file beside a
    ``jsonl`` ledger sink."""
    path = None
    if "jsonl" in config.ledger_sinks:
        options = config.ledger_sink.get("jsonl", {})
        path = jsonl_path(options if isinstance(options, Mapping) else {}, config.root)
    return receipt_stores(target.has_adapter, open_session=open_session, jsonl_path=path)


def _read(stores: list[ReceiptStore], run_ids: list[str], source: str) -> list[ReceiptRow]:
    """Rows of ``run_ids`` from the first store that has any."""
    for store in stores:
        rows = [r for run_id in run_ids for r in store.read(run_id) if r.source_section == source]
        if rows:
            return rows
    return []


def receipts_for_runs(
    registry: PluginRegistry, config: ProjectConfig, source: str, run_ids: list[str]
) -> list[ReceiptRow]:
    """Every receipt row (all attempts) of ``run_ids`` in ``source``'s receipt stores."""
    with SessionPool(registry, config) as pool:
        where = pool.target(resolve_destination(config, source))
        stores = project_stores(config, where, open_session=lambda: pool.get(where))
        return _read(stores, run_ids, source)


def backfill_receipts(
    registry: PluginRegistry,
    config: ProjectConfig,
    where: ResolvedDestination,
    source: str,
    backfill_id: str,
    run_ids: list[str],
) -> list[ReceiptRow]:
    """Every receipt row of the chunk attempts of ``backfill_id`` in ``where``'s dataset.

    A chunk's ``run_id`` depends only on its bounds, so backfills sharing chunk bounds share
    run ids: an attempt is picked by its ledger row's ``backfill_id`` and ``started_at`` (the
    receipt's ``run_started_at``), never by run id alone.
    """
    with SessionPool(registry, config) as pool:
        target = pool.target(where)
        attempts: set[tuple[str, object]] = set()
        for _, sink in source_ledger(registry, config, where, pool).with_method("read_run"):
            for run_id in run_ids:
                attempts |= {
                    (r.run_id, r.started_at)
                    for r in sink.read_run(run_id)  # type: ignore[attr-defined]
                    if r.run_id == run_id
                    and r.source_section == source
                    and r.backfill_id == backfill_id
                }
            if attempts:
                break
        stores = project_stores(config, target, open_session=lambda: pool.get(target))
        for store in stores:
            rows = [
                r
                for run_id in run_ids
                for r in store.read(run_id)
                if r.source_section == source and (r.run_id, r.run_started_at) in attempts
            ]
            if rows:
                return rows
    return []
