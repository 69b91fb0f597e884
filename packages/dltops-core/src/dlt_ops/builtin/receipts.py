"""The receipts feature as a lifecycle plugin (entry point ``receipts`` in ``dlt_ops.lifecycle``).

A counting gate per run (records in, pages, what passed dlt's own filters), and an observer that
turns the finished run into receipt rows, hands them to the receipt stores and adds the receipt
table to the outcome's reports. Built only on the documented lifecycle hooks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dlt_ops import hookimpl
from dlt_ops.log import get_logger
from dlt_ops.redact import redact
from dlt_ops.runner.gates import GateSummary, merged_verdicts

if TYPE_CHECKING:
    from dlt import Pipeline
    from dlt.extract.source import DltSource

    from dlt_ops.receipts.counting import Tallies
    from dlt_ops.receipts.model import ReceiptRow
    from dlt_ops.receipts.store import ReceiptStore
    from dlt_ops.runner.context import RunContext
    from dlt_ops.runner.model import RunOutcome
    from dlt_ops.runner.prepare import PreparedRun

log = get_logger(__name__)


class CountingGate:
    """Counts each selected resource's items; decides nothing."""

    name = "receipts"

    def __init__(self, rates: dict[str, float]) -> None:
        from dlt_ops.receipts.counting import Tallies

        self.rates = rates
        self.tallies: Tallies = Tallies()

    def attach(self, source: DltSource) -> DltSource:
        """Add the two counting steps to every selected resource."""
        from dlt_ops.receipts.counting import attach_counters

        return attach_counters(source, self.tallies)

    def after_extract(self, pipeline: Pipeline, load_id: str) -> None:
        """Nothing to decide."""

    def summary(self) -> GateSummary:
        """No verdicts: counting only."""
        return GateSummary(self.name)


class ReceiptsGateFactory:
    """One per prepared run: cost rates are parsed once (a whole backfill shares them)."""

    def __init__(self, prepared: PreparedRun) -> None:
        self.prepared = prepared
        self._rates: dict[str, float] | None = None

    def rates(self) -> dict[str, float]:
        """``[sources.X.dlt_ops.cost]``, checked on first use (raises ``ConfigError``)."""
        if self._rates is None:
            from dlt_ops.receipts.build import cost_rates

            source = self.prepared.source
            self._rates = cost_rates(self.prepared.config.source(source).cost, source)
        return self._rates

    def check(self, source: DltSource) -> None:
        """The cost rates parse."""
        self.rates()

    def gate(self, run: RunContext, source: DltSource) -> CountingGate:
        """A fresh counter for this run."""
        return CountingGate(self.rates())


@hookimpl
def dlt_ops_extract_gates(prepared: PreparedRun) -> ReceiptsGateFactory:
    """Every run is counted."""
    return ReceiptsGateFactory(prepared)


def stores_for(run: RunContext) -> list[ReceiptStore]:
    """The receipt stores of the run's project, on the run's own session."""
    from dlt_ops.receipts.service import project_stores

    return project_stores(run.config, run.target, open_session=run.open_session)


def _measured_cost(run: RunContext, outcome: RunOutcome) -> float | None:
    """What the destination itself says the run's load cost (adapters that can tell)."""
    if not run.target.has_adapter or outcome.phase != "done":
        return None
    from dlt_ops.ledger import summarize_error

    session = run.open_session()
    try:  # a protocol member: adapters without a figure inherit the default (None)
        return session.adapter.measured_cost(session.client, session.dataset, outcome.record)
    except Exception as exc:  # a cost figure is observability; the receipt goes on without it
        log.warning("receipts.measured_cost_failed", error=summarize_error(exc))
        return None


def normalized_tables(tables: dict[str, str], pipeline: Pipeline | None) -> dict[str, str]:
    """Table names as dlt stores them (``EventLog`` → ``event_log``): dlt's row counts use those."""
    if pipeline is None or pipeline.default_schema_name is None:
        return tables  # stopped before dlt had a schema: nothing loaded to look up
    naming = pipeline.default_schema.naming
    return {name: naming.normalize_table_identifier(table) for name, table in tables.items()}


def with_resumes(rows: list[ReceiptRow], run: RunContext) -> list[ReceiptRow]:
    """The rows of resources that resumed from a checkpoint carry the span they skipped, and
    those whose filesystem reader skipped bad files list them."""
    from dlt_ops.runner.skipped import skipped_files_text

    resumes = {r.resource: r for r in run.state.resumes}
    out = []
    for row in rows:
        if (resume := resumes.get(row.resource_name)) is not None:
            row = row.replace(skipped_from=resume.skipped_from, resumed_from=resume.resumed_from)
        bad = [b for b in run.state.bad_files if b.resource == row.resource_name]
        out.append(row.replace(skipped_files=skipped_files_text(bad)) if bad else row)
    return out


def receipt_rows(
    run: RunContext, outcome: RunOutcome, *, measure_cost: bool = True
) -> list[ReceiptRow]:
    """The run's receipt rows; none when it stopped before counting (setup, preflight).
    ``measure_cost=False`` skips asking the destination (lineage needs only the counts)."""
    from dlt_ops.receipts.build import build_receipts

    counter = next((g for g in outcome.gates if isinstance(g, CountingGate)), None)
    if counter is None:
        return []
    pipeline = outcome.pipeline
    return build_receipts(
        run_id=run.run_id,
        run_started_at=outcome.record.started_at,
        pipeline_name=run.pipeline_name,
        source=run.source,
        tallies=counter.tallies,
        verdicts=merged_verdicts([g.summary() for g in outcome.gates]),
        trace=pipeline.last_trace if pipeline is not None else None,
        phase=outcome.phase,
        rates=counter.rates,
        failure=outcome.record.error_summary,
        tables=normalized_tables(run.state.tables, pipeline),
        measured_cost=_measured_cost(run, outcome) if measure_cost else None,
        loaded_tables=run.state.loaded.tables if run.state.loaded is not None else None,
    )


def closed_runs_receipts(run: RunContext, outcome: RunOutcome) -> list[ReceiptRow]:
    """Receipts of the dead runs this run closed ``completed`` (their load had committed), from
    the rows their packages landed: the same counts their ledger rows book."""
    from dlt_ops.receipts.build import settled_receipts

    tables = normalized_tables(run.state.tables, outcome.pipeline)
    return [
        row
        for record, landed in run.state.closed_landed
        if landed is not None
        for row in settled_receipts(
            run_id=record.run_id, run_started_at=record.started_at,
            pipeline_name=record.pipeline_name, source=record.source_section,
            tables=tables, loaded_tables=landed,
        )
    ]  # fmt: skip


@hookimpl
def dlt_ops_run_finished(run: RunContext, outcome: RunOutcome) -> None:
    """Build the receipt, write it to every store (each isolated), report the table."""
    from dlt_ops.receipts.render import receipt_table

    rows = with_resumes(receipt_rows(run, outcome), run)
    closed = closed_runs_receipts(run, outcome)
    if not rows and not closed:
        return
    for row in rows:
        if not row.reconciles:
            log.warning("receipts.unreconciled", resource=row.resource_name, row=row.as_json())
    stores = stores_for(run)
    if not stores:  # a core-tier destination without a jsonl ledger: nowhere to keep them
        log.warning(
            f"receipt not kept: destination '{run.target.engine}' has no DestinationAdapter and "
            f"no jsonl ledger sink is configured, so `runs show` will have no receipt for this "
            f'run. Add "jsonl" to [dlt_ops] ledger_sinks (or install the engine\'s adapter).',
            run_id=run.run_id,
        )
    for store in stores:
        for attempt in (rows, *_by_run(closed)):  # one write per attempt, as a run writes its own
            try:
                if attempt is not rows and _kept(store, attempt[0]):
                    continue  # the dead run wrote its own before it died
                store.write(attempt)
            except Exception as exc:  # receipts are observability, like the ledger
                log.error(
                    f"Failed to write receipt rows to {store.target} (non-fatal, run continues)",
                    run_id=attempt[0].run_id if attempt else run.run_id,
                    error=redact(f"{type(exc).__name__}: {exc}"),
                )
    if rows:
        outcome.reports.append(receipt_table(rows))


def _kept(store: ReceiptStore, row: ReceiptRow) -> bool:
    """Whether ``store`` already holds a receipt of ``row``'s run attempt."""
    return any(r.run_started_at == row.run_started_at for r in store.read(row.run_id))


def _by_run(rows: list[ReceiptRow]) -> list[list[ReceiptRow]]:
    """``rows`` grouped by (run id, start), in order."""
    groups: dict[tuple[str, object], list[ReceiptRow]] = {}
    for row in rows:
        groups.setdefault((row.run_id, row.run_started_at), []).append(row)
    return list(groups.values())
