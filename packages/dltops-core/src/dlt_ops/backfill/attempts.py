"""Closing a dead attempt's ledger row when its chunk is reclaimed.

Every attempt of a chunk is its own ``_dlt_ops_runs`` row: the chunk's deterministic ``run_id``
(seed 000) plus the attempt's ``started_at`` (the same pair keys its receipt rows). A worker
killed mid-chunk leaves its row ``running``; the worker that reclaims the chunk closes that row
as ``failed`` with the reason ("abandoned: ...") before its own attempt starts, so no row is
left in flight and no attempt's counts are overwritten by another's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dlt_ops.ledger.build import build_sinks
from dlt_ops.ledger.model import RunStatus, summarize_error
from dlt_ops.ledger.writer import utcnow
from dlt_ops.log import get_logger

if TYPE_CHECKING:
    from dlt_ops.backfill.state import BackfillState
    from dlt_ops.config import ProjectConfig
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.target import Target

log = get_logger(__name__)


def close_abandoned_attempts(
    registry: PluginRegistry,
    config: ProjectConfig,
    state: BackfillState,
    where: Target,
    *,
    source: str,
    run_id: str,
    backfill_id: str,
    reason: str,
) -> int:
    """Mark every ``running`` ledger row of this chunk's earlier attempts ``failed``.

    Called right after a successful reclaim, before the new attempt writes its start row: the
    claim guarantees no live worker holds the chunk, so a ``running`` row of it is dead. Best
    effort (the ledger is observability); returns how many rows were closed.
    """
    sinks = build_sinks(registry, config, where, open_session=lambda: state.session)
    closed, now = 0, utcnow()
    for name, sink in sinks:
        read_run = getattr(sink, "read_run", None)
        if read_run is None:
            continue
        try:
            dead = [
                r
                for r in read_run(run_id)
                if r.run_id == run_id
                and r.backfill_id == backfill_id
                and r.source_section == source
                and r.status == RunStatus.running
            ]
            for record in dead:
                sink.finish(
                    record.replace(
                        status=str(RunStatus.failed),
                        completed_at=now,
                        error_summary=f"abandoned: {reason}"[:500],
                    )
                )
                closed += 1
        except Exception as exc:  # the new attempt goes on; status shows the row abandoned?
            log.error(
                f"Failed to close the abandoned attempt of run {run_id} in {sink.target} "
                "(non-fatal)",
                sink=name,
                error=summarize_error(exc),
            )
    if closed:
        log.warning("backfill.attempt_abandoned", run_id=run_id, rows=closed, reason=reason)
    return closed
