"""The orchestrator-neutral entry points: what an orchestrator's task calls (no orchestrator
imported here; ``dlt_ops.airflow`` builds DAGs on these).

* :func:`run_source` — one run of one source, recorded under the orchestrator's
  ``trigger_source`` and run id; waits for the source's run lease instead of failing.
* :func:`seed_backfill`, :func:`run_backfill_chunk`, :func:`check_backfill` — a backfill as
  separate tasks: seed the plan's rows once, then any number of processes (mapped tasks on any
  number of workers) each claim and run one chunk through ``_dlt_backfills`` (exactly once: a
  completed chunk is skipped, a failed or expired one is resumed), then check the window is
  covered.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from dlt_ops.errors import BackfillNotCoveredError, DltOpsError
from dlt_ops.log import get_logger
from dlt_ops.runner.model import OrchestratorRun

if TYPE_CHECKING:
    from dlt_ops.backfill.plan import BackfillPlan
    from dlt_ops.backfill.state import BackfillState, ChunkRow
    from dlt_ops.config import ProjectConfig
    from dlt_ops.ledger import RunRecord
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.runner.window import Window

log = get_logger(__name__)

__all__ = [
    "ChunkOutcome",
    "OrchestratorRun",
    "check_backfill",
    "run_backfill_chunk",
    "run_backfill_chunk_outcome",
    "run_source",
    "seed_backfill",
]


class ChunkFailedError(DltOpsError):
    """The chunk's run failed; a retry of the task resumes it."""

    exit_code = 1


def _project(project_root: Path | str) -> tuple[ProjectConfig, PluginRegistry]:
    from dlt_ops.config import load_project_config
    from dlt_ops.destinations import project_registry

    config = load_project_config(Path(project_root))
    return config, project_registry(config)


def run_source(
    project_root: Path | str,
    source: str,
    *,
    resources: tuple[str, ...] = (),
    window: Window | None = None,
    dataset: str | None = None,
    trigger_source: str,
    run_id: str | None = None,
    wait: float | None = math.inf,
    orchestrator: OrchestratorRun | None = None,
) -> RunRecord:
    """Run ``source`` once; return its ledger record. Raises ``RunFailedError`` when the run
    failed (its row says why), ``LeaseBusyError`` when ``wait`` ran out. ``orchestrator``
    (the orchestrator's run id and try) lands in the row's ``orchestrator_run_id`` and
    ``orchestrator_try``."""
    from dlt_ops.runner.model import RunRequest
    from dlt_ops.runner.run import RunFailedError, execute_run

    config, registry = _project(project_root)
    request = RunRequest(source=source, resources=resources, dataset=dataset, window=window,
                         trigger_source=trigger_source, run_id=run_id, wait=wait,
                         orchestrator=orchestrator)  # fmt: skip
    outcome = execute_run(registry, config, request)
    if not outcome.ok:
        raise RunFailedError(outcome)
    return outcome.record


def _plan(source: str, from_: datetime | str, to: datetime | str, chunk: str,
          resources: tuple[str, ...]) -> BackfillPlan:  # fmt: skip
    from dlt_ops.backfill.plan import BackfillPlan

    return BackfillPlan.build(source, from_, to, chunk, resources)


def seed_backfill(
    project_root: Path | str,
    source: str,
    from_: datetime | str,
    to: datetime | str,
    chunk: str,
    *,
    resources: tuple[str, ...] = (),
    dataset: str | None = None,
) -> list[int]:
    """Check the source and seed the plan's chunk rows (idempotent); the indexes of the chunks
    not completed yet, one per task to map."""
    from dlt_ops.backfill.service import check_source, new_token, open_state
    from dlt_ops.backfill.state import ChunkStatus

    config, registry = _project(project_root)
    plan = _plan(source, from_, to, chunk, resources)
    prepared = check_source(registry, config, plan, dataset)
    session, state = open_state(registry, config, prepared.where, new_token())
    with session:
        rows = state.seed(plan, prepared.pipeline_name)
    done = {cid for cid, row in rows.items() if row.status == ChunkStatus.completed}
    log.info("backfill.seeded", backfill_id=plan.backfill_id, chunks=plan.total,
             completed=len(done))  # fmt: skip
    return [c.index for c in plan.chunks if c.chunk_id not in done]


def run_backfill_chunk(
    project_root: Path | str,
    source: str,
    from_: datetime | str,
    to: datetime | str,
    chunk: str,
    index: int,
    *,
    resources: tuple[str, ...] = (),
    dataset: str | None = None,
    lease: str = "10m",
    trigger_source: str = "backfill",
    orchestrator: OrchestratorRun | None = None,
    seeded: bool = False,
) -> str:
    """Claim chunk ``index`` of the plan through ``_dlt_backfills`` and run it; returns the
    chunk's status afterwards (``completed``, or ``claimed``/``running`` when another worker
    holds it). Raises :class:`ChunkFailedError` when its run failed (a retry resumes it).
    ``trigger_source`` names the orchestrator in the chunk's ledger row; the row's ``run_id``
    stays the chunk's deterministic id whoever runs it, and ``orchestrator`` names the run
    and try that ran it. ``seeded``: a :func:`seed_backfill` of this plan ran before (an
    orchestrator's seed task), so the call reads the plan's rows once instead of seeding them
    again (a chunk without a row is still seeded). :func:`run_backfill_chunk_outcome` also
    says whether this call ran the chunk."""
    return run_backfill_chunk_outcome(
        project_root, source, from_, to, chunk, index, resources=resources, dataset=dataset,
        lease=lease, trigger_source=trigger_source, orchestrator=orchestrator, seeded=seeded,
    ).status  # fmt: skip


@dataclass(frozen=True)
class ChunkOutcome:
    """What one call did to its chunk. ``outcome``: ``ran`` (this call ran it to
    completion), ``skipped`` (already completed, nothing loaded), ``held`` (another worker
    holds it), ``lost`` (its claim was taken over while it ran)."""

    outcome: str
    status: str
    index: int
    run_id: str
    backfill_id: str
    records_loaded: int | None = None

    def as_dict(self) -> dict[str, object]:
        """A JSON-able dict (an orchestrator's task result)."""
        return asdict(self)


_OUTCOMES = {"completed": "ran", "skipped": "skipped", "held": "held", "lost": "lost"}


def run_backfill_chunk_outcome(
    project_root: Path | str,
    source: str,
    from_: datetime | str,
    to: datetime | str,
    chunk: str,
    index: int,
    *,
    resources: tuple[str, ...] = (),
    dataset: str | None = None,
    lease: str = "10m",
    trigger_source: str = "backfill",
    orchestrator: OrchestratorRun | None = None,
    seeded: bool = False,
) -> ChunkOutcome:
    """:func:`run_backfill_chunk`, returning what the call did (see :class:`ChunkOutcome`).

    Claims still go through ``_dlt_backfills`` whatever ``seeded`` says: it only spares the
    seed's statements (the table and dataset created, the plan read twice and verified), and
    the row read back after a chunk this call completed or found completed."""
    from dlt_ops.backfill.executor import BackfillOptions, ChunkEvent, ChunkWorker
    from dlt_ops.backfill.plan import parse_lease
    from dlt_ops.backfill.service import check_source, new_token, open_state
    from dlt_ops.backfill.state import ChunkStatus
    from dlt_ops.runner.pipeline import project_environment

    config, registry = _project(project_root)
    plan = _plan(source, from_, to, chunk, resources)
    target = next((c for c in plan.chunks if c.index == index), None)
    if target is None:
        raise DltOpsError(f"backfill of '{source}' has no chunk {index} (0..{plan.total - 1})")
    options = BackfillOptions(dataset=dataset, lease=parse_lease(lease),
                              trigger_source=trigger_source, orchestrator=orchestrator)  # fmt: skip
    prepared = check_source(registry, config, plan, dataset)
    session, state = open_state(registry, config, prepared.where, new_token())
    with session, project_environment(config.root):
        row = _seeded_row(state, plan, target.chunk_id, prepared.pipeline_name, seeded)
        if row is not None and row.status == ChunkStatus.completed:  # completed is final
            return ChunkOutcome("skipped", row.status, index, target.run_id, plan.backfill_id)
        events: list[str] = []
        seen: list[ChunkEvent] = []

        def note(event: ChunkEvent) -> None:
            events.append(event.error or event.kind)
            seen.append(event)

        worker = ChunkWorker(registry, config, plan, state, options, note, prepared=prepared)
        ok = worker.run_one(target, row)  # the claim decides on the row just read
        last = next((e for e in reversed(seen) if e.kind in _OUTCOMES), None)
        if last is not None and last.kind in ("completed", "skipped"):
            status = ChunkStatus.completed.value  # what this call just wrote or read
        else:
            row = state.rows(plan.backfill_id).get(target.chunk_id)
            status = str(row.status) if row is not None else "unknown"
    if not ok:
        raise ChunkFailedError(
            f"chunk {index}/{plan.total} of backfill {plan.backfill_id} failed: "
            f"{events[-1] if events else 'see the ledger'}"
        )
    return ChunkOutcome(
        outcome=_OUTCOMES[last.kind] if last else "unknown", status=status, index=index,
        run_id=target.run_id, backfill_id=plan.backfill_id,
        records_loaded=last.records if last and last.kind == "completed" else None,
    )  # fmt: skip


def _seeded_row(state: BackfillState, plan: BackfillPlan, chunk_id: str, pipeline_name: str,
                seeded: bool) -> ChunkRow | None:  # fmt: skip
    """The chunk's row before the claim: the plan seeded here (idempotent) unless the caller
    seeded it; then one read, verified against the plan, and the seed only when the chunk
    has no row (no seed task ran against this destination)."""
    from dlt_ops.errors import BackfillStateError

    if seeded:
        try:
            rows = state.rows(plan.backfill_id)
        except BackfillStateError:  # no table yet: the seed below creates it
            rows = {}
        if chunk_id in rows:
            state.verify(plan, rows.values())
            return rows[chunk_id]
    return state.seed(plan, pipeline_name).get(chunk_id)


def check_backfill(
    project_root: Path | str,
    source: str,
    from_: datetime | str,
    to: datetime | str,
    chunk: str,
    *,
    resources: tuple[str, ...] = (),
    dataset: str | None = None,
) -> int:
    """Raise ``BackfillNotCoveredError`` unless every chunk of the plan is completed; returns
    the rows the chunks loaded."""
    from dlt_ops.backfill.service import open_state
    from dlt_ops.backfill.state import ChunkStatus
    from dlt_ops.destinations import resolve_destination
    from dlt_ops.secrets import engage_destination_secrets

    config, registry = _project(project_root)
    engage_destination_secrets(config, registry, source)  # e.g. from an Airflow Connection
    plan = _plan(source, from_, to, chunk, resources)
    where = resolve_destination(config, source, dataset)
    session, state = open_state(registry, config, where, "check", read_only=True)
    with session:
        rows = state.rows(plan.backfill_id) if state.exists() else {}
    done = {cid for cid, r in rows.items() if r.status == ChunkStatus.completed}
    missing = [c.index for c in plan.chunks if c.chunk_id not in done]
    if missing:
        raise BackfillNotCoveredError(
            f"backfill {plan.backfill_id} of '{source}': chunk(s) {missing} not completed"
        )
    return sum(r.records_loaded or 0 for r in rows.values())
