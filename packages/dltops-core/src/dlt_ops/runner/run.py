"""One run of one source, in SPEC §4.1's order.

prepare (resolve source, destination and dataset; plugins check and contribute gates) → ledger
start row → ``dlt_ops_run_started`` → import and instantiate the source → preflight → gates →
build the pipeline → extract → gates decide → normalize → load → terminal ledger row →
``dlt_ops_run_finished``.

Everything after the start row sits under one ``try``: whatever happens (an import-safety
violation, a secret missing in the source function, a failed load, Ctrl-C) the row ends in a
terminal status. Preparation failures happen before the row and raise (exit 2): there is
nowhere to record them. Features (assertions, receipts, alerts) attach through the lifecycle
hooks; the runner imports none of them.
"""

from __future__ import annotations

import math
import os
import socket
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager, nullcontext
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dlt_ops import __version__
from dlt_ops.adapters import DestinationSession
from dlt_ops.clock import utcnow
from dlt_ops.config import ProjectConfig
from dlt_ops.destinations import ResolvedDestination, open_session
from dlt_ops.errors import DltOpsError
from dlt_ops.ledger import LedgerWriter, RunRecord, RunStatus, outbox, summarize_error
from dlt_ops.ledger.abandoned import (
    booked_by_earlier_attempts,
    close_dead_attempts,
    close_dead_runs_of,
    close_runs_by_id,
)
from dlt_ops.ledger.build import build_sinks
from dlt_ops.ledger.resumes import ledger_text
from dlt_ops.ledger.sinks import LedgerSink
from dlt_ops.log import bound_contextvars, get_logger
from dlt_ops.plugins import PluginRegistry
from dlt_ops.runner import counts, lifecycle
from dlt_ops.runner.committed import settle_committed
from dlt_ops.runner.context import RunContext, active_run
from dlt_ops.runner.first_load import first_load_turn
from dlt_ops.runner.half_written import check_working_dir, half_written
from dlt_ops.runner.load_stamp import stamp_source
from dlt_ops.runner.model import RunOutcome, RunPhase, RunRequest, RunState
from dlt_ops.runner.packages import (
    Landed,
    LoadedBooks,
    PackageBook,
    PackageOrigin,
    book_loaded,
    booked_unreceipted,
    count_landed_rows,
    rows_landed_by,
    rows_per_package,
)
from dlt_ops.runner.pipeline import build_pipeline, project_environment, working_base
from dlt_ops.runner.prepare import PreparedRun, prepare_run
from dlt_ops.runner.window import Window
from dlt_ops.runner.working_dir import (
    chunk_working_dir,
    repair_interrupted_commits,
    seed_from_sibling,
)

if TYPE_CHECKING:
    from dlt.common.pipeline import LoadInfo
    from dlt.extract.resource import DltResource

log = get_logger(__name__)

__all__ = ["RunFailedError", "RunOutcome", "RunRequest", "execute_run", "prepare_for"]


class RunFailedError(DltOpsError):
    """The run started and failed; its ledger row says ``failed``."""

    exit_code = 1

    def __init__(self, outcome: RunOutcome) -> None:
        self.outcome = outcome
        record = outcome.record
        # the cause first (the ledger's summary); which run after it
        super().__init__(
            f"{record.error_summary} — run {record.run_id} of '{record.source_section}' failed"
        )
        self.__cause__ = outcome.error  # --debug prints the whole chain


def _dlt_version() -> str | None:
    from dlt_ops.plugins.entry_points import distribution_version  # not importlib.metadata: ~20 ms

    return distribution_version("dlt")


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
        orchestrator_run_id=request.orchestrator.run_id if request.orchestrator else None,
        orchestrator_try=request.orchestrator.try_number if request.orchestrator else None,
    )


def _queued(record: RunRecord, request: RunRequest, *, waited: bool) -> RunRecord:
    """The start row once the lease is held. A run that waited for the lease (``waited``: a
    ``--wait`` run, an orchestrator task, a backfill chunk behind a plain run) or was ready to
    (``--wait``) starts now and keeps, as ``queued_at``, when it began waiting (the record was
    made just before it asked for the lease), so queue time never reads as run time. A run
    that did not wait (refused at once, a chunk joining its backfill's lease, a scheduler
    attempt holding the lease itself): unchanged."""
    ready = request.wait is not None and not request.backfill_id
    if request.lease_held or not (waited or ready):
        return record
    return record.replace(started_at=utcnow(), queued_at=record.started_at)


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


class _LedgerSession(_LazySession):
    """The ledger's session on a single-writer engine: the run's own while that one is open
    (no second connection), else one of its own that the writer closes after each write.

    While ``pinned`` (setup and load, when dlt itself opens the database) it stays open: dlt's
    connections then reuse the open database instead of reading the file again; during extract
    and normalize, the long parts, it is let go between writes so readers get in."""

    def __init__(self, run_session: _LazySession) -> None:
        super().__init__(run_session.registry, run_session.config, run_session.where)
        self.run_session = run_session
        self.pinned = True

    def release(self) -> None:
        """After a ledger write: close unless pinned."""
        if not self.pinned:
            self.close()

    def __call__(self) -> DestinationSession:
        if self.session is None and self.run_session.session is not None:
            return self.run_session.session
        return super().__call__()

    def hand_over(self) -> None:
        """The run is over: the run's session takes this open connection (receipts and hooks
        write next), rather than closing it and opening another."""
        if self.run_session.session is None:
            self.run_session.session, self.session = self.session, None
        self.close()


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
        base = request.working_dir or working_base(config.root, where)
        discard_pickled_trace(base / where.pipeline_name)


def prepare_for(
    registry: PluginRegistry, config: ProjectConfig, request: RunRequest
) -> PreparedRun:
    """:func:`~dlt_ops.runner.prepare.prepare_run` for ``request``."""
    return prepare_run(
        registry, config, request.source, resources=request.resources,
        dataset=request.dataset, trigger_source=request.trigger_source,
    )  # fmt: skip


def execute_run(
    registry: PluginRegistry,
    config: ProjectConfig,
    request: RunRequest,
    *,
    prepared: PreparedRun | None = None,
) -> RunOutcome:
    """Run one source and record it in the ledger. Returns the outcome; never raises for a
    failure that happened after the start row (the outcome carries it).

    ``prepared`` is reused when given (a backfill prepares once for all its chunks); it must
    come from the same source, resources and dataset as ``request``.
    """
    if prepared is None:
        prepared = prepare_for(registry, config, request)
    where = prepared.target
    session = _LazySession(registry, config, where)
    # on a single-writer engine the ledger has its own session, closed after each write: a
    # connection held for the whole run would lock readers out (status could never say running)
    ledger_session = _LedgerSession(session) if where.single_writer else None
    sinks = build_sinks(registry, config, where, open_session=ledger_session or session)
    run_id = request.run_id or uuid.uuid4().hex
    writer = LedgerWriter(
        sinks, _start_record(request, where, run_id), heartbeat_seconds=config.heartbeat_seconds,
        release=ledger_session.release if ledger_session else None,
        refused=lambda sink, record: outbox.keep(config.root, sink, record),
    )  # fmt: skip
    bound = bound_contextvars(run_id=run_id, source=request.source, destination=where.engine)
    ctx = RunContext(
        run_id=run_id,
        source=request.source,
        resources=request.resources,
        window=request.window,
        config=config,
        registry=registry,
        target=where,
        open_session=session,
        backfill_id=request.backfill_id,
    )
    state = ctx.state
    waited: list[bool] = []  # set when the lease was busy and the run queued for it
    lease = _lease(registry, config, request, prepared, run_id, on_wait=lambda: waited.append(True))
    # the lease comes first: a run refused for a busy source writes nothing (no ledger row),
    # and a run waiting for it shows nowhere as running until it holds it
    with bound, lease as lease_failure, project_environment(config.root), \
            _no_trace_left(config, request, where):  # fmt: skip
        writer.record = _queued(writer.record, request, waited=bool(waited))
        writer.start(keep=True)
        with writer.borrowed() as ledger_sinks:
            work = (request.working_dir or working_base(config.root, where)) / where.pipeline_name
            _close_dead_runs(ctx, ledger_sinks, work, ledger_session or session,
                             attempt=writer.record, reclaimed=request.reclaimed)  # fmt: skip
        lifecycle.run_started(ctx, writer.record)
        try:
            if lease_failure is not None:  # the destination could not be asked: fail the row
                raise lease_failure
            load_info = _execute(ctx, request, prepared, hold=_holder(writer, ledger_session),
                                 started_at=writer.record.started_at)  # fmt: skip
        except BaseException as exc:  # every outcome, Ctrl-C included, ends the row
            interrupt = _interrupt_in(exc)
            record = writer.finish(
                RunStatus.failed,
                error_summary=_noted(state, summarize_error(interrupt or exc), run_id),
                resumed_from=ledger_text(state.resumes),
                keep=ledger_session is not None,
            )
            if ledger_session is not None:
                ledger_session.hand_over()
            _close_dropped(writer, request.source, state)
            outcome = RunOutcome(
                record, state.phase, error=exc, pipeline=state.pipeline, gates=tuple(state.gates)
            )
            lifecycle.run_finished(ctx, outcome)
            session.close()
            if interrupt is not None:
                raise interrupt from exc
            if not isinstance(exc, Exception):
                raise
            log.error("run.failed", error=record.error_summary)
            return outcome
        trace = state.pipeline.last_trace if state.pipeline is not None else None
        record = writer.finish(
            RunStatus.completed,
            dlt_run_id=counts.first_load_id(load_info) or _first(state.loaded),
            records_extracted=counts.records_extracted(trace),
            records_loaded=(
                state.loaded.records_loaded if state.loaded else counts.records_loaded(trace)
            ),
            **({"error_summary": _noted(state, None, run_id)} if state.dropped else {}),
            **({"note": _booked_earlier_note(state)} if state.booked_earlier is not None else {}),
            resumed_from=ledger_text(state.resumes),
            keep=ledger_session is not None,
        )
        if ledger_session is not None:
            ledger_session.hand_over()
        _close_dropped(writer, request.source, state)
        if state.loaded and state.loaded.inherited:
            _close_inherited(writer, request.source, state.loaded.inherited)
        outcome = RunOutcome(
            record, state.phase, load_info=load_info, pipeline=state.pipeline,
            gates=tuple(state.gates), booked_earlier=state.booked_earlier or 0,
        )  # fmt: skip
        lifecycle.run_finished(ctx, outcome)
        if state.loaded:
            state.loaded.settle()  # the row and the receipt book them: drop the package notes
        session.close()
        log.info("run.completed", records_loaded=record.records_loaded)
        return outcome


@contextmanager
def _lease(
    registry: PluginRegistry,
    config: ProjectConfig,
    request: RunRequest,
    prepared: PreparedRun,
    run_id: str,
    on_wait: Callable[[], None] | None = None,
) -> Iterator[DltOpsError | None]:
    """Hold the source's run lease for this run (see ``runner/lease.py``): a plain run holds it
    alone; a backfill chunk shares it with its backfill's other chunks and waits for a plain
    run to finish. A busy source raises ``LeaseBusyError`` (nothing written); a destination
    that cannot be asked yields its error, so the run fails inside its ledger row."""
    from dlt_ops.errors import DestinationError
    from dlt_ops.runner.lease import source_lease

    if request.lease_held:
        yield None
        return
    with ExitStack() as stack:
        try:
            stack.enter_context(source_lease(
                registry, config, prepared.target, source=request.source, run_id=run_id,
                wait=math.inf if request.backfill_id else request.wait,
                shared_by=request.backfill_id, trigger=request.trigger_source, on_wait=on_wait,
            ))  # fmt: skip
        except DestinationError as exc:
            yield exc
            return
        yield None


def _close_dead_runs(
    ctx: RunContext,
    sinks: list[tuple[str, LedgerSink]],
    work: Path,
    open_session: Callable[[], DestinationSession],
    *,
    attempt: RunRecord,
    reclaimed: str | None = None,
) -> None:
    """Close this source's rows whose process died on this host, and (``reclaimed``: a
    backfill chunk taken over from a dead holder, on any host) the chunk's earlier attempts. A
    dead run whose load committed is closed ``completed`` with what it landed — its pending
    packages that ``_dlt_loads`` records are settled first — and noted in the state, so its
    receipt is written from the same counts; a reclaimed chunk whose earlier attempt completed
    (closed so here, or it finished before it died) books nothing more. Finishes an earlier run
    could not write (the outbox) go first: such a row is over, with its own cause. A settled
    package whose run is not closed here (that run ended: failed after its commit) is this
    run's to book, as dlt's load step would have loaded it again."""
    outbox.flush(ctx.config.root, sinks, ctx.source, dataset=ctx.target.dataset)
    settled = settle_committed(work, open_session if ctx.target.has_adapter else None)
    book = PackageBook(work)
    origins = {load_id: book.origin(load_id).run_id for load_id in settled}
    landed: dict[str, Landed] = {}

    def rows_of(dead: RunRecord) -> int | None:
        found = rows_landed_by(_work_of(ctx, dead, work, open_session), dead.run_id)
        if found is not None:
            landed[dead.run_id] = found
        return found.rows if found is not None else None

    closed = close_dead_attempts(sinks, attempt, reclaimed, rows_of) if reclaimed else []
    closed += close_dead_runs_of(sinks, ctx.source, closed_by=ctx.run_id, landed=rows_of)
    ctx.state.closed_landed = [(r, landed[r.run_id].tables) for r in closed if r.run_id in landed]
    ctx.state.closed_landed += _booked_unreceipted(ctx, sinks, work)
    ctx.state.settled = [load_id for load_id, run in origins.items() if run not in landed]
    if reclaimed:
        ctx.state.booked_earlier = booked_by_earlier_attempts(sinks, attempt)


def _work_of(
    ctx: RunContext, dead: RunRecord, work: Path, open_session: Callable[[], DestinationSession]
) -> Path:
    """Where a dead run's packages are: this run's working dir, or, for another backfill
    chunk's attempt (a plain run or another chunk found it dead), that chunk's own, whose
    pending packages that committed are settled first."""
    if dead.backfill_id is None or dead.run_id == ctx.run_id:
        return work
    root, ids = ctx.config.root, (dead.dataset, dead.backfill_id, dead.run_id)
    chunk = chunk_working_dir(root, *ids) / ctx.pipeline_name
    settle_committed(chunk, open_session if ctx.target.has_adapter else None)
    return chunk


def _booked_earlier_note(state: RunState) -> str:
    return (f"the window was loaded by an earlier attempt of this run (its row books "
            f"{state.booked_earlier} row(s)): not extracted, nothing booked here")  # fmt: skip


def _booked_unreceipted(
    ctx: RunContext, sinks: list[tuple[str, LedgerSink]], work: Path
) -> list[tuple[RunRecord, Mapping[str, int] | None]]:
    """Runs whose ledger row booked their load, then died before their receipt: the rows they
    landed, with their completed row, for the receipts feature to write what is missing."""
    due = booked_unreceipted(work)
    found: list[tuple[RunRecord, Mapping[str, int] | None]] = []
    for run_id, landed in due.items():
        for _, sink in sinks:
            read_run = getattr(sink, "read_run", None)
            if read_run is None:
                continue
            try:
                rows = [
                    r for r in read_run(run_id)
                    if (r.run_id, r.source_section, r.status)
                    == (run_id, ctx.source, RunStatus.completed)
                ]  # fmt: skip
            except Exception as exc:  # observability: the run goes on without that receipt
                log.warning("receipts.due_unreadable", run_id=run_id, error=summarize_error(exc))
                continue
            if rows:
                found.append((max(rows, key=lambda r: r.started_at), landed.tables))
                break
    return found


def _first(loaded: LoadedBooks | None) -> str | None:
    """The first load id a run booked (its load info is gone when it settled a commit)."""
    return loaded.load_ids[0] if loaded is not None and loaded.load_ids else None


def _noted(state: RunState, summary: str | None, run_id: str) -> str | None:
    """The ledger row's summary, led by what ``--drop-pending`` dropped (if it did)."""
    if state.dropped is None:
        return summary
    note = state.dropped.note(run_id)
    return f"{note}; {summary}" if summary else note


def _close_dropped(writer: LedgerWriter, source: str, state: RunState) -> None:
    """Close the still-``running`` rows of the runs whose packages ``--drop-pending`` dropped."""
    dropped, run_id = state.dropped, writer.record.run_id
    if dropped is None:
        return
    reasons = {r: f"its pending load package was dropped by run {run_id} (--drop-pending)"
               for r in dropped.runs if r != run_id}  # fmt: skip
    if reasons:
        with writer.borrowed() as sinks:
            close_runs_by_id(sinks, reasons, source=source)


def _close_inherited(
    writer: LedgerWriter, source: str, inherited: tuple[PackageOrigin, ...]
) -> None:
    """Close the rows of the runs whose pending packages this run loaded (they are dead)."""
    run_id = writer.record.run_id
    reasons = {
        o.run_id: f"its load package {o.load_id} ({o.rows if o.rows is not None else '?'} "
        f"rows) was loaded by run {run_id}, which counts those rows"
        for o in inherited
        if o.run_id is not None and o.run_id != run_id
    }
    for origin in inherited:
        log.info("run.inherited_package", load_id=origin.load_id, from_run=origin.run_id,
                 rows=origin.rows)  # fmt: skip
    if reasons:
        with writer.borrowed() as sinks:
            close_runs_by_id(sinks, reasons, source=source)


def _table_name(resource: DltResource) -> str:
    """The resource's root table (its name unless a static ``table_name`` hint says otherwise)."""
    name = resource.table_name
    return name if isinstance(name, str) else resource.name


def _holder(writer: LedgerWriter, ledger: _LedgerSession | None) -> Callable[[bool], None]:
    """``hold(True)`` keeps the ledger's single-writer connection open, ``hold(False)`` lets go
    of it between writes (under the writer's lock: never mid-heartbeat)."""

    def hold(on: bool) -> None:
        if ledger is None:
            return
        with writer.borrowed():
            ledger.pinned = on
            if on:
                ledger()

    return hold


def _execute(
    ctx: RunContext,
    request: RunRequest,
    prepared: PreparedRun,
    *,
    hold: Callable[[bool], None] = lambda _on: None,
    started_at: datetime | None = None,
) -> LoadInfo | None:
    from dlt_ops.secrets import engage_secrets
    from dlt_ops.validate.preflight import run_preflight

    config, registry, state = ctx.config, ctx.registry, ctx.state
    loaded = prepared.loaded()
    # secrets reach dlt's providers before the source function resolves them (every path)
    engage_secrets(config, registry, request.source)
    source = prepared.instantiate()
    report = run_preflight(
        config, registry, loaded.info, source,
        window=ctx.window is not None, engaged_features=request.engaged_features,
    )  # fmt: skip
    for notice in report.notices:
        log.warning(notice)
    gates = [g for f in prepared.gate_factories if (g := f.gate(ctx, source)) is not None]
    base = request.working_dir or working_base(config.root, ctx.where)
    pipeline_dir = base / ctx.pipeline_name
    # an earlier attempt of this backfill chunk whose load committed: its window is loaded,
    # extracting it again would load it twice. One that completed (closed so by this run, or
    # it died after its finish) booked the rows on its row; one that failed after its commit
    # left them to this attempt
    if state.booked_earlier is not None:  # set for a reclaimed chunk only
        prior: Landed | None = Landed(0, {})
    else:
        prior = rows_landed_by(pipeline_dir, ctx.run_id) if request.backfill_id else None
    # a backfill chunk's working dir is its own: a package half-written there was left by a
    # killed attempt of this chunk (never loaded); the chunk re-extracts its window anyway
    drop = prior is None and (request.drop_pending or (
        request.backfill_id is not None and bool(half_written(pipeline_dir))
    ))  # fmt: skip
    state.dropped = check_working_dir(pipeline_dir, drop=drop)
    seeded = request.seed_state_from is not None and seed_from_sibling(
        base / ctx.pipeline_name, request.seed_state_from / ctx.pipeline_name
    )
    pipeline = build_pipeline(
        config, request.source, ctx.where,
        working_dir=request.working_dir, adapter=report.destination.adapter,
        progress=request.progress,
    )  # fmt: skip
    state.pipeline = pipeline
    book = PackageBook(Path(pipeline.working_dir))
    repair_interrupted_commits(Path(pipeline.working_dir))
    state.tables = {n: _table_name(r) for n, r in source.selected_resources.items()}
    for gate in gates:
        source = gate.attach(source)
        state.gates.append(gate)
    if prior is not None:
        log.warning(
            "run.chunk_already_loaded",
            rows=prior.rows,
            booked_earlier=state.booked_earlier,
            reason="an earlier attempt's load committed: not extracted again",
        )
        state.loaded = LoadedBooks(prior.rows, (), book, (), prior.tables)
        state.phase = RunPhase.done
        return None
    if config.load_timestamp_column and started_at is not None:  # last: gates judge raw items
        source = stamp_source(source, config.load_timestamp_column, started_at)
    # as pipeline.run does: restore state (incremental cursors) from the destination when the
    # working dir is new or behind, e.g. a fresh CI runner or a retried backfill chunk's dir
    if not seeded:
        pipeline.sync_destination()
    if request.seed_cursor is not None:  # backfill --seed-cursor: before anything is extracted
        from dlt_ops.runner.seed_cursor import seed_cursors

        seed_cursors(pipeline, source, request.seed_cursor)
    with _interval(request.window), active_run(ctx):
        # explicit steps so gates can judge the run's package between extract and load
        state.phase = RunPhase.extract
        hold(False)  # readers (status) get in between ledger writes while the source is read
        extract_info = pipeline.extract(source)
        own = set(extract_info.loads_ids)
        for load_id in own:
            book.extracted(load_id, ctx.run_id)
        state.phase = RunPhase.gates
        for gate in gates:
            gate.after_extract(pipeline, extract_info.loads_ids[-1])
        state.phase = RunPhase.normalize
        book.normalized(rows_per_package(pipeline.normalize()))
        state.phase = RunPhase.load
        hold(True)  # dlt opens the database now: it reuses our open one
        with request.load_guard() if request.load_guard is not None else nullcontext(), \
                first_load_turn(ctx, pipeline):  # fmt: skip
            load_info, load_ids = _load(ctx, pipeline)
        load_ids += [i for i in state.settled if i not in load_ids]
        # a package an earlier run left pending loads here too: book its rows to this run
        state.loaded = book_loaded(
            book, load_ids, own, lambda lid: count_landed_rows(pipeline, lid)
        )
        state.loaded.mark_booked(ctx.run_id)  # a kill before the books are done leaves this note
        state.phase = RunPhase.done
    return load_info


def _load(ctx: RunContext, pipeline: Any) -> tuple[LoadInfo | None, list[str]]:
    """dlt's load step, and the load ids it loaded. A load that failed after its packages
    committed (a full disk when dlt records them loaded) counts as loaded when every package it
    left pending is in ``_dlt_loads``: they are settled, never loaded again. Otherwise the run
    fails and the next one settles (and books) what committed."""
    try:
        load_info = pipeline.load()
    except Exception as exc:
        work = Path(pipeline.working_dir)
        opener = ctx.open_session if ctx.target.has_adapter else None
        settled = settle_committed(work, opener, all_or_none=True)
        if not settled:
            raise
        log.warning("run.load_failed_after_commit", load_ids=settled, error=summarize_error(exc))
        return None, settled
    return load_info, list(load_info.loads_ids)
