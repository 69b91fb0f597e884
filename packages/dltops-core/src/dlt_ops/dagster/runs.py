"""What a Dagster step executes, without Dagster: one run of a source, or one partition (a
backfill chunk claimed through ``_dlt_backfills``), and the receipt metadata of what it did.

:mod:`dlt_ops.dagster.definitions` turns the results into materializations and failures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dlt_ops.errors import DltOpsError
from dlt_ops.log import get_logger

log = get_logger(__name__)

TRIGGER = "dagster"


class ChunkHeldError(DltOpsError):
    """Another run holds the partition's chunk; a retry after it finishes skips it."""

    exit_code = 1


@dataclass
class StepResult:
    """One step's account: the dlt-ops run, whether it loaded now, per-resource receipt
    metadata (resource name → metadata) and what every asset of the step carries."""

    run_id: str
    status: str
    ran: bool
    per_resource: dict[str, dict[str, Any]] = field(default_factory=dict)
    common: dict[str, Any] = field(default_factory=dict)


def _receipt_metadata(project_root: Path | str, source: str, run_id: str,
                      dataset: str | None) -> tuple[Any, dict[str, dict[str, Any]]]:  # fmt: skip
    """The run's newest attempt and its receipt rows as flat per-resource metadata."""
    from dlt_ops.orchestration import _project
    from dlt_ops.receipts.service import find_run

    config, registry = _project(project_root)
    report = find_run(registry, config, [source], run_id, dataset=dataset)
    per: dict[str, dict[str, Any]] = {}
    for row in report.latest_receipts():
        per[row.resource_name] = {
            "dlt_ops/records_in": row.records_in,
            "dlt_ops/records_out": row.records_out,
            "dlt_ops/rows_loaded": row.rows_loaded,
            "dlt_ops/child_rows_loaded": row.child_rows_loaded,
            "dlt_ops/filtered": row.filtered,
            "dlt_ops/rejected": row.rejected,
            "dlt_ops/cost": row.cost,
            "dlt_ops/cost_basis": row.cost_basis,
        }
    return report.latest, per


def _result(project_root: Path | str, source: str, run_id: str, dataset: str | None,
            dagster_run_id: str, since: datetime) -> StepResult:  # fmt: skip
    latest, per = _receipt_metadata(project_root, source, run_id, dataset)
    ran = latest.started_at >= since  # an earlier attempt's row: this step loaded nothing
    common: dict[str, Any] = {
        "dlt_ops/run_id": run_id,
        "dlt_ops/status": latest.status if ran else "already completed",
        "dlt_ops/records_loaded": latest.records_loaded if ran else 0,
        "dlt_ops/trigger_source": latest.trigger_source,
        "dlt_ops/dagster_run_id": dagster_run_id,
        "dlt_ops/receipt": {name: {k.removeprefix("dlt_ops/"): v for k, v in m.items()}
                            for name, m in per.items()} if ran else {},
    }  # fmt: skip
    if latest.backfill_id:
        common["dlt_ops/backfill_id"] = latest.backfill_id
    return StepResult(run_id, latest.status, ran, per if ran else {}, common)


def run_asset_step(
    project_root: Path | str,
    source: str,
    resources: tuple[str, ...],
    dagster_run_id: str,
    *,
    dataset: str | None = None,
    try_number: int = 1,
) -> StepResult:
    """One run of ``source`` (``resources``: a subset; empty: the whole source), recorded as
    ``trigger_source = dagster`` with the Dagster run id in its ledger ``run_id`` and
    ``orchestrator_run_id`` (``try_number``: the step's attempt, from 1, in
    ``orchestrator_try``). Waits for the source's run lease. Raises ``RunFailedError`` (its
    message is the ledger's error summary)."""
    from dlt_ops.orchestration import OrchestratorRun, run_source

    since = datetime.now(UTC)
    run_id = f"dagster:{dagster_run_id}:{source}"
    record = run_source(project_root, source, resources=resources, dataset=dataset,
                        trigger_source=TRIGGER, run_id=run_id, wait=math.inf,
                        orchestrator=OrchestratorRun(dagster_run_id, try_number))  # fmt: skip
    log.info("dagster.run_done", source=source, run_id=record.run_id, status=record.status)
    return _result(project_root, source, record.run_id, dataset, dagster_run_id, since)


def run_partition_step(
    project_root: Path | str,
    source: str,
    window: tuple[datetime, datetime, str],
    partition_start: datetime,
    dagster_run_id: str,
    *,
    dataset: str | None = None,
    lease: str = "10m",
    try_number: int = 1,
) -> StepResult:
    """Claim and run the chunk of the backfill ``window`` (start, end, chunk) that starts at
    ``partition_start``: the plan, ``backfill_id`` and chunk ``run_id`` are those of
    ``pipeline backfill --from <start> --to <end> --chunk <chunk>``. A completed chunk is
    skipped (nothing reloaded); a chunk another run holds raises :class:`ChunkHeldError`;
    a failed chunk raises ``ChunkFailedError`` (a retry resumes it). The chunk's ledger row
    names the Dagster run and ``try_number`` (``orchestrator_run_id``/``orchestrator_try``)."""
    from dlt_ops.backfill.plan import BackfillPlan
    from dlt_ops.orchestration import OrchestratorRun, run_backfill_chunk

    start, end, chunk = window
    plan = BackfillPlan.build(source, start, end, chunk)
    target = next((c for c in plan.chunks if c.start == partition_start), None)
    if target is None:
        raise DltOpsError(
            f"partition {partition_start.isoformat()} is not a chunk start of backfill "
            f"{plan.backfill_id} of '{source}' ({plan.describe()}); check backfill_start, "
            f"backfill_end and backfill_chunk in [sources.{source}.dlt_ops]."
        )
    since = datetime.now(UTC)
    orchestrator = OrchestratorRun(dagster_run_id, try_number)
    status = run_backfill_chunk(project_root, source, start, end, chunk, target.index,
                                dataset=dataset, lease=lease, trigger_source=TRIGGER,
                                orchestrator=orchestrator)  # fmt: skip
    if status != "completed":
        raise ChunkHeldError(
            f"{target.label(plan.total)} of backfill {plan.backfill_id} is {status} by another "
            f"run; re-run the partition once that run ends (a completed chunk is skipped)."
        )
    result = _result(project_root, source, target.run_id, dataset, dagster_run_id, since)
    result.common.update({"dlt_ops/chunk_from": target.start.isoformat(),
                          "dlt_ops/chunk_to": target.end.isoformat()})  # fmt: skip
    return result
