"""One run of one source, in SPEC §4.1's order.

resolve destination and dataset → ledger start row → import and instantiate the source →
preflight → build the pipeline → extract → normalize → load → terminal ledger row.

Everything after the start row sits under one ``try``: whatever happens (an import-safety
violation, a secret missing in the source function, a failed load, Ctrl-C) the row ends in a
terminal status. Resolution failures happen before the row and raise (exit 2): there is nowhere
to record them.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from dlt_ops import __version__
from dlt_ops.adapters import DestinationSession, check_identifier
from dlt_ops.config import ProjectConfig
from dlt_ops.destinations import ResolvedDestination, open_session, resolve_destination
from dlt_ops.errors import DltOpsError, UnknownResourceError
from dlt_ops.ledger import LedgerWriter, RunRecord, RunStatus, summarize_error
from dlt_ops.ledger.build import build_sinks
from dlt_ops.ledger.writer import utcnow
from dlt_ops.plugins import PluginRegistry
from dlt_ops.runner import counts
from dlt_ops.runner.context import RunContext, active_run
from dlt_ops.runner.gates import build_gates
from dlt_ops.runner.pipeline import build_pipeline, pipelines_dir, project_environment
from dlt_ops.runner.window import Window

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class RunRequest:
    """What to run. ``window`` bounds every incremental to ``[start, end)``."""

    source: str
    resources: tuple[str, ...] = ()
    dataset: str | None = None
    window: Window | None = None
    trigger_source: str = "cli"
    run_id: str | None = None
    backfill_id: str | None = None
    #: dlt working directory override (backfill gives each chunk its own).
    working_dir: Path | None = None
    #: Adapter-gated features the caller engages (e.g. ``("backfill",)``), for the preflight.
    engaged_features: tuple[str, ...] = ()
    #: Wraps ``pipeline.load()`` (backfill: a lock so concurrent chunks load one at a time).
    load_guard: Callable[[], AbstractContextManager[None]] | None = None


@dataclass
class RunOutcome:
    """What happened: the final ledger record, and on success dlt's load info and pipeline."""

    record: RunRecord
    error: BaseException | None = None
    load_info: Any = None
    pipeline: Any = None
    receipts: list[Any] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the run completed."""
        return self.error is None


class RunFailedError(DltOpsError):
    """The run started and failed; its ledger row says ``failed``."""

    exit_code = 1

    def __init__(self, outcome: RunOutcome) -> None:
        self.outcome = outcome
        record = outcome.record
        super().__init__(
            f"run {record.run_id} of '{record.source_section}' failed: {record.error_summary}"
        )


def _dlt_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dlt")
    except PackageNotFoundError:
        return None


def _start_record(request: RunRequest, where: ResolvedDestination, run_id: str) -> RunRecord:
    window = request.window
    return RunRecord(
        pipeline_name=where.pipeline_name,
        source_section=request.source,
        resource_name=request.resources[0] if len(request.resources) == 1 else None,
        destination=where.engine,
        dataset=where.dataset,
        run_id=run_id,
        dlt_run_id=None,
        backfill_id=request.backfill_id,
        trigger_source=request.trigger_source,
        started_at=utcnow(),
        completed_at=None,
        status=RunStatus.running,
        records_extracted=None,
        records_loaded=None,
        error_summary=None,
        host=socket.gethostname(),
        pid=os.getpid(),
        heartbeat_at=None,
        window_from=window.start if window else None,
        window_to=window.end if window else None,
        dltops_version=__version__,
        dlt_version=_dlt_version(),
    )


class _LazySession:
    """Opens the run's destination session on first use and closes it at the end."""

    def __init__(self, registry: PluginRegistry, config: ProjectConfig, where: ResolvedDestination):
        self.registry, self.config, self.where = registry, config, where
        self.session: DestinationSession | None = None

    def __call__(self) -> DestinationSession:
        if self.session is None:
            self.session = open_session(self.registry, self.config, self.where)
        return self.session

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None


@contextmanager
def _interval(window: Window | None) -> Iterator[None]:
    """Inject ``window`` into every incremental, as an external scheduler would (dlt's context)."""
    from dlt.common.configuration.container import Container
    from dlt.extract.incremental.context import TimeIntervalContext

    ctx = (
        TimeIntervalContext(interval=(window.start, window.end), allow_external_schedulers=True)
        if window is not None
        else TimeIntervalContext()
    )
    with Container().injectable_context(ctx):
        yield


def _interrupt_in(exc: BaseException) -> KeyboardInterrupt | None:
    """A Ctrl-C/SIGTERM somewhere in ``exc``'s chain (dlt wraps it in PipelineStepFailed)."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, KeyboardInterrupt):
            return current
        todo += [current.__cause__, current.__context__, getattr(current, "exception", None)]
    return None


@contextmanager
def _no_trace_left(
    config: ProjectConfig, request: RunRequest, where: ResolvedDestination
) -> Iterator[None]:
    """dlt's pickled trace may quote secrets: it never outlives the run (see working_state)."""
    from dlt_ops.working_state import discard_pickled_trace

    try:
        yield
    finally:
        base = request.working_dir or pipelines_dir(config.root)
        discard_pickled_trace(base / where.pipeline_name)


def _select_resources(source: Any, wanted: tuple[str, ...], name: str) -> Any:
    if not wanted:
        return source
    known = list(source.resources.keys())
    unknown = [r for r in wanted if r not in known]
    if unknown:
        raise UnknownResourceError(name, unknown, known)
    return source.with_resources(*wanted)


def execute_run(registry: PluginRegistry, config: ProjectConfig, request: RunRequest) -> RunOutcome:
    """Run one source and record it in the ledger. Returns the outcome; never raises for a
    failure that happened after the start row (the outcome carries it)."""
    from dlt_ops.project.discovery import discover

    project = discover(config.root)
    project.source(request.source)  # unknown source: a usage error before any row
    where = resolve_destination(config, request.source, request.dataset)
    # the ledger, receipts and state tables live in this dataset: refuse a name no adapter
    # could quote before anything is written (exit 2), rather than lose the ledger silently
    check_identifier(where.dataset, max_length=1024, subject="dataset")
    registry.get("trigger_emitter", request.trigger_source)  # must be registered
    full_tier = registry.has("destination", where.engine)
    session = _LazySession(registry, config, where)
    sinks = build_sinks(
        registry,
        config,
        engine=where.engine,
        dataset=where.dataset,
        full_tier=full_tier,
        open_session=session,
    )
    run_id = request.run_id or uuid.uuid4().hex
    writer = LedgerWriter(
        sinks, _start_record(request, where, run_id), heartbeat_seconds=config.heartbeat_seconds
    )
    bound = structlog.contextvars.bound_contextvars(
        run_id=run_id, source=request.source, destination=where.engine
    )
    ctx = RunContext(
        run_id=run_id,
        source=request.source,
        resources=request.resources,
        window=request.window,
        config=config,
        registry=registry,
        where=where,
        full_tier=full_tier,
        open_session=session,
        backfill_id=request.backfill_id,
    )
    with bound, project_environment(config.root), _no_trace_left(config, request, where):
        writer.start()
        try:
            outcome = _execute(ctx, request, project)
        except BaseException as exc:  # every outcome, Ctrl-C included, ends the row
            interrupt = _interrupt_in(exc)
            record = writer.finish(
                RunStatus.failed, error_summary=summarize_error(interrupt or exc)
            )
            receipts = _receipts(ctx, writer, record.error_summary)
            session.close()
            if interrupt is not None:
                raise interrupt from exc
            if not isinstance(exc, Exception):
                raise
            log.error("run.failed", error=record.error_summary)
            return RunOutcome(record=record, error=exc, receipts=receipts)
        record = writer.finish(RunStatus.completed, **outcome.pop("ledger"))
        receipts = _receipts(ctx, writer, None)
        session.close()
        log.info("run.completed", records_loaded=record.records_loaded)
        return RunOutcome(record=record, receipts=receipts, **outcome)


def _table_name(resource: Any) -> str:
    """The resource's root table (its name unless a static ``table_name`` hint says otherwise)."""
    name = resource.table_name
    return name if isinstance(name, str) else resource.name


def _measured_cost(ctx: RunContext, writer: LedgerWriter) -> float | None:
    """What the destination itself says the run's load cost (adapters that can tell)."""
    if not ctx.full_tier:
        return None
    session = ctx.open_session()
    measure = getattr(session.adapter, "measured_cost", None)
    if measure is None:
        return None
    try:
        return measure(session.client, session.dataset, writer.record)
    except Exception as exc:  # a cost figure is observability; the receipt goes on without it
        log.warning("receipts.measured_cost_failed", error=summarize_error(exc))
        return None


def _receipts(ctx: RunContext, writer: LedgerWriter, failure: str | None) -> list[Any]:
    """Build the run's receipt rows and hand them to the sinks; never raises."""
    from dlt_ops.receipts.build import build_receipts

    extras = ctx.extras
    if "tallies" not in extras:
        return []  # the run stopped before it counted anything (setup, preflight)
    try:
        pipeline = extras.get("pipeline")
        rows = build_receipts(
            run_id=ctx.run_id,
            run_started_at=writer.record.started_at,
            pipeline_name=ctx.pipeline_name,
            source=ctx.source,
            tallies=extras["tallies"],
            gate_summaries=[g.summary() for g in extras.get("gate_objects", [])],
            trace=pipeline.last_trace if pipeline is not None else None,
            phase=extras.get("phase", "setup"),
            rates=extras.get("rates", {}),
            failure=failure,
            tables=extras.get("tables"),
            measured_cost=_measured_cost(ctx, writer) if extras.get("phase") == "done" else None,
        )
    except Exception as exc:  # a receipt is observability: it never changes the outcome
        log.error("receipts.build_failed", error=summarize_error(exc))
        return []
    for row in rows:
        if not row.reconciles:
            log.warning("receipts.unreconciled", resource=row.resource_name, row=row.as_json())
    writer.receipts(rows)
    return rows


def _preflight(ctx: RunContext, request: RunRequest, info: Any, source: Any) -> None:
    from dlt_ops.validate.preflight import run_preflight

    report = run_preflight(
        ctx.config,
        ctx.registry,
        info,
        source,
        window=ctx.window is not None,
        engaged_features=request.engaged_features,
    )
    for notice in report.notices:
        log.warning(notice)


def _execute(ctx: RunContext, request: RunRequest, project: Any) -> dict[str, Any]:
    from dlt_ops.project.introspect import load_source
    from dlt_ops.receipts.build import cost_rates
    from dlt_ops.receipts.counting import Tallies, attach_counters
    from dlt_ops.secrets import engage_secrets

    config, registry = ctx.config, ctx.registry
    extras = ctx.extras
    extras["rates"] = cost_rates(config.source(request.source).cost, request.source)
    loaded = load_source(project, config, request.source)
    # secrets reach dlt's providers before the source function resolves them (every path)
    engage_secrets(config, registry, request.source)
    source = _select_resources(loaded.source_fn(), request.resources, request.source)
    _preflight(ctx, request, loaded.info, source)
    pipeline = build_pipeline(config, request.source, ctx.where, working_dir=request.working_dir)
    extras["pipeline"] = pipeline
    extras["tables"] = {n: _table_name(r) for n, r in source.selected_resources.items()}
    source = attach_counters(source, extras.setdefault("tallies", Tallies()))
    gates = extras["gate_objects"] = build_gates(ctx, source)
    for gate in gates:
        source = gate.attach(source)
    # as pipeline.run does: restore state (incremental cursors) from the destination when the
    # working dir is new or behind, e.g. a fresh CI runner or a backfill chunk's own dir
    pipeline.sync_destination()
    with _interval(request.window), active_run(ctx):
        # explicit steps so gates can judge the run's package between extract and load
        extras["phase"] = "extract"
        extract_info = pipeline.extract(source)
        extras["phase"] = "gates"
        for gate in gates:
            gate.after_extract(pipeline, extract_info.loads_ids[-1])
        extras["phase"] = "normalize"
        pipeline.normalize()
        extras["phase"] = "load"
        with request.load_guard() if request.load_guard is not None else nullcontext():
            load_info = pipeline.load()
        extras["phase"] = "done"
    trace = pipeline.last_trace
    return {
        "ledger": {
            "dlt_run_id": counts.first_load_id(load_info),
            "records_extracted": counts.records_extracted(trace),
            "records_loaded": counts.records_loaded(trace),
        },
        "load_info": load_info,
        "pipeline": pipeline,
    }
