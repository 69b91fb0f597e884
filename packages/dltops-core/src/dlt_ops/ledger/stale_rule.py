"""The ``stale_sources`` validate rule: sources that ran before and then stopped.

A warning, never a gate. Silent for a source whose ledger is missing, empty, unreadable or
unsupported: validate never requires destination credentials, so a CI job without them stays
quiet rather than noisy.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import TYPE_CHECKING

from dlt_ops.validate.framework import Finding, Rule

if TYPE_CHECKING:
    from dlt_ops.validate.framework import ValidationContext


def stale_sources(ctx: ValidationContext) -> Iterable[Finding]:
    """Warn for each source whose newest run started more than ``staleness_days`` ago."""
    from dlt_ops.ledger.sinks import LedgerQuery
    from dlt_ops.ledger.status import collect_status
    from dlt_ops.ledger.writer import utcnow

    days = ctx.config.staleness_days
    cutoff = utcnow() - timedelta(days=days)
    names = [s.name for s in ctx.sources()]
    for state in collect_status(ctx.registry, ctx.config, names, LedgerQuery("", limit=1)):
        if state.ledger != "ok" or not state.runs:
            continue
        started = state.runs[0].started_at
        if started < cutoff:
            yield Finding(
                state.source,
                "runs",
                f"stale source: last run started {started.isoformat()}, more than {days} "
                f"day(s) ago ([dlt_ops] staleness_days = {days})",
                is_warning=True,
            )


STALE_SOURCES = Rule(
    "stale_sources", "Sources with no run for staleness_days (warning).", stale_sources
)
