"""Backfill as a service: entry checks, seeding, workers, and the final tally.

Entry checks run once per command, in order, before any state is written: the window and chunk
(usage, exit 2), the run is prepared (source, resources, destination, dataset, sinks, gates:
``runner.prepare``), the source imports and instantiates, the runtime preflight passes with
``backfill`` engaged (an adapter is required: core tier is refused with
``DestinationCapabilityError``; every selected resource needs an incremental cursor:
``MissingIncrementalCursorError``). Every chunk then reuses the prepared run.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dlt_ops.backfill.executor import BackfillOptions, ChunkEvent, ChunkWorker, Emit
from dlt_ops.backfill.plan import BackfillPlan
from dlt_ops.backfill.session import open_state
from dlt_ops.backfill.state import ChunkRow, ChunkStatus, utcnow
from dlt_ops.errors import PreflightError
from dlt_ops.log import bound_contextvars, get_logger

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.runner.prepare import PreparedRun

log = get_logger(__name__)


def new_token() -> str:
    """A worker token unique per invocation: ``host:pid:<8 hex>``."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def check_source(
    registry: PluginRegistry, config: ProjectConfig, plan: BackfillPlan, dataset: str | None
) -> PreparedRun:
    """Entry checks (see module doc), once for the whole backfill; returns the prepared run
    every chunk reuses (the source imported once, gates and their config resolved once).
    Writes nothing."""
    from dlt_ops.errors import UsageError
    from dlt_ops.runner.pipeline import project_environment
    from dlt_ops.runner.prepare import prepare_run
    from dlt_ops.validate.preflight import run_preflight

    prepared = prepare_run(
        registry, config, plan.source, resources=plan.resources, dataset=dataset,
        trigger_source="backfill",
    )  # fmt: skip
    with project_environment(config.root):
        loaded = prepared.loaded()
        try:
            source = prepared.instantiate()
        except UsageError:  # an unknown resource: exit 2, as for a run
            raise
        except Exception as exc:
            raise PreflightError(
                f"source '{plan.source}' could not be instantiated for the backfill: "
                f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}. Fix its config or "
                f"secrets; `dlt-ops pipeline validate` shows details."
            ) from exc
        run_preflight(
            config, registry, loaded.info, source, window=True, engaged_features=("backfill",)
        )
        for factory in prepared.gate_factories:  # e.g. assertion columns against the models
            factory.check(source)
    return prepared


def start_worker_server(registry: PluginRegistry, config: ProjectConfig, source: str) -> None:
    """Start the ``--workers`` fork server (:mod:`dlt_ops.isolation`) for ``source``'s
    configured engine, unless that engine's adapter runs one writer at a time (its chunks then
    run in this process). Called before the entry checks: the server imports dlt and the
    engine's client while they run, so the first worker starts with them loaded instead of
    waiting. Says nothing when the configuration is wrong: the checks report that."""
    from dlt_ops.destinations import engine_name, load_adapter
    from dlt_ops.errors import DltOpsError
    from dlt_ops.isolation import preload_of, run_context

    try:
        engine = engine_name(config.destination_for(source))
        adapter = load_adapter(registry, engine)
    except DltOpsError:
        return
    if not adapter.capabilities.single_writer:
        run_context([engine], preload_of(adapter))


@dataclass
class BackfillSummary:
    """The tally of one invocation, from the final state of the plan's rows."""

    backfill_id: str
    total: int
    completed: int = 0
    skipped: int = 0
    failed: int = 0
    held: int = 0
    pending: int = 0
    rows: list[ChunkRow] = field(default_factory=list)

    @property
    def covered(self) -> bool:
        """Every chunk of the window is completed."""
        return self.completed + self.skipped == self.total

    def tally(self) -> str:
        """The final line."""
        return (
            f"Backfill {self.backfill_id}: {self.completed} completed, {self.skipped} skipped, "
            f"{self.failed} failed, {self.held} held elsewhere, {self.pending} pending "
            f"({self.total} chunks)"
        )


def summarize(
    plan: BackfillPlan, rows: dict[str, ChunkRow], completed_here: set[int]
) -> BackfillSummary:
    """Classify every chunk from the final rows (covered is covered, whoever did it)."""
    summary = BackfillSummary(plan.backfill_id, plan.total)
    for chunk in plan.chunks:
        row = rows.get(chunk.chunk_id)
        status = row.status if row else ChunkStatus.pending
        if status == ChunkStatus.completed:
            if chunk.index in completed_here:
                summary.completed += 1
            else:
                summary.skipped += 1
        elif status == ChunkStatus.failed:
            summary.failed += 1
        elif status in (ChunkStatus.claimed, ChunkStatus.running):
            summary.held += 1
        else:
            summary.pending += 1
        if row is not None:
            summary.rows.append(row)
    return summary


def execute_backfill(
    registry: PluginRegistry,
    config: ProjectConfig,
    plan: BackfillPlan,
    options: BackfillOptions,
    emit: Emit = lambda event: None,
    *,
    on_start: Callable[[BackfillPlan, dict[str, ChunkRow]], None] | None = None,
) -> BackfillSummary:
    """Check, seed and execute ``plan``; return the tally (the caller decides the exit code)."""
    if options.workers > 1:  # its imports (~1-2 s) overlap the entry checks and the seeding
        start_worker_server(registry, config, plan.source)
    prepared = check_source(registry, config, plan, options.dataset)
    where = prepared.where
    token = new_token()
    bound = bound_contextvars(
        backfill_id=plan.backfill_id, source=plan.source, destination=where.engine
    )
    completed_here: set[int] = set()

    def record(event: ChunkEvent) -> None:
        if event.kind == "completed":
            completed_here.add(event.index)
        emit(event)

    session, state = open_state(registry, config, where, token)
    with bound, session:
        rows = state.seed(plan, where.pipeline_name)
        log.info("backfill.seeded", chunks=plan.total, holder=token, workers=options.workers)
        if on_start is not None:
            on_start(plan, rows)
        # a single-writer engine (per its adapter) runs chunks in-process, one after another
        if options.workers > 1 and not session.adapter.capabilities.single_writer:
            from dlt_ops.backfill.workers import run_worker_processes

            run_worker_processes(config, plan, options, token, record)  # server started above
        else:
            if options.workers > 1:
                log.warning(
                    "backfill.workers_serialized",
                    engine=where.engine,
                    reason="one writing process per database file: chunks run one at a time",
                )
            ChunkWorker(registry, config, plan, state, options, record, prepared=prepared).run()
        summary = summarize(plan, state.rows(plan.backfill_id), completed_here)
    log.info("backfill.done", **{k: v for k, v in vars(summary).items() if k != "rows"})
    return summary


@dataclass(frozen=True)
class PlannedChunk:
    """A dry-run line: what an invocation would do with one chunk now."""

    index: int
    action: str  # "run" | "skip" | "held"
    row: ChunkRow | None


def dry_run(
    registry: PluginRegistry, config: ProjectConfig, plan: BackfillPlan, dataset: str | None
) -> list[PlannedChunk]:
    """The chunk plan and what a real invocation would do with each chunk; writes nothing."""
    where = check_source(registry, config, plan, dataset).where
    session, state = open_state(registry, config, where, "dry-run", read_only=True)
    with session:
        rows = state.rows(plan.backfill_id) if state.exists() else {}
    if rows:
        state.verify(plan, rows.values())
    now, out = utcnow(), []
    for chunk in plan.chunks:
        row = rows.get(chunk.chunk_id)
        if row is not None and row.status == ChunkStatus.completed:
            action = "skip"
        elif (
            row is not None and row.status in ("claimed", "running") and not row.lease_expired(now)
        ):
            action = "held"
        else:
            action = "run"
        out.append(PlannedChunk(chunk.index, action, row))
    return out


def status_counts(rows: list[ChunkRow]) -> dict[str, Any]:
    """Per-status counts and coverage of one backfill's rows."""
    counts = Counter(r.status for r in rows)
    total = len(rows)
    done = counts.get(ChunkStatus.completed, 0)
    return {
        "total": total,
        "by_status": {s.value: counts.get(s, 0) for s in ChunkStatus},
        "coverage": (done / total) if total else 0.0,
        "records_loaded": sum(r.records_loaded or 0 for r in rows),
    }


__all__ = [
    "BackfillOptions",
    "BackfillSummary",
    "check_source",
    "dry_run",
    "execute_backfill",
    "open_state",
    "status_counts",
    "summarize",
]
