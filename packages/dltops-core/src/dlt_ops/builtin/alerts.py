"""Alerts as a lifecycle plugin (entry point ``alerts`` in ``dlt_ops.lifecycle``).

Refuses a run whose ``[dlt_ops] alert_sinks`` names a sink nobody registers (before anything is
written), and sends one alert to every configured sink when a run fails — an assertion failure
as its own kind. Built only on the documented lifecycle hooks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dlt_ops import hookimpl

if TYPE_CHECKING:
    from dlt_ops.alerts import Alert
    from dlt_ops.runner.context import RunContext
    from dlt_ops.runner.model import RunOutcome
    from dlt_ops.runner.prepare import PreparedRun


@hookimpl
def dlt_ops_prepare_run(prepared: PreparedRun) -> None:
    """Every configured alert sink is registered and loads (exit 2 otherwise)."""
    from dlt_ops.alerts.dispatch import check_alert_sinks

    check_alert_sinks(prepared.registry, prepared.config)


def alert_for(run: RunContext, outcome: RunOutcome) -> Alert | None:
    """The alert a finished run raises; ``None`` for a completed run."""
    from dlt_ops.alerts import Alert, AlertKind
    from dlt_ops.errors import AssertionFailedError

    if outcome.ok:
        return None
    record = outcome.record
    kind = (
        AlertKind.assertion_failed
        if isinstance(outcome.error, AssertionFailedError)
        else AlertKind.run_failed
    )
    return Alert(
        kind=kind,
        source=record.source_section,
        run_id=record.run_id,
        pipeline_name=record.pipeline_name,
        destination=record.destination,
        dataset=record.dataset,
        trigger_source=record.trigger_source,
        started_at=record.started_at,
        completed_at=record.completed_at,
        message=record.error_summary or "failed",
        backfill_id=record.backfill_id,
        failed_checks=tuple(c for g in outcome.gates for c in g.summary().failed_checks),
    )


@hookimpl
def dlt_ops_run_finished(run: RunContext, outcome: RunOutcome) -> None:
    """A failed run (or failed assertion) reaches every configured sink."""
    from dlt_ops.alerts.dispatch import build_alert_sinks, send_all

    alert = alert_for(run, outcome)
    if alert is None:
        return
    send_all(build_alert_sinks(run.registry, run.config), alert)
