"""``clean``: plan, refuse what cannot be done whole, remove, and record it in the ledger.

Order, for safety: every refusal first (patterns, unknown resources, no adapter for the remote
half, a run holding the source); then the ledger's audit row starts; then the remote half
(dlt's tables and rows, then dlt-ops' rows); the local working dirs last, so a failed remote
half leaves local state to retry from. The audit row ends ``completed`` with what was removed,
or ``failed`` with how far it got.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dlt_ops import __version__
from dlt_ops.adapters import DestinationSession, Statement
from dlt_ops.clean.plan import STAGING_SUFFIX, CleanPlan, RowSet
from dlt_ops.clock import utcnow
from dlt_ops.errors import DltOpsError, UsageError
from dlt_ops.ledger import LedgerWriter, RunRecord, RunStatus, summarize_error
from dlt_ops.log import get_logger

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig
    from dlt_ops.destinations import ResolvedDestination
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.project import Project
    from dlt_ops.target import Target

log = get_logger(__name__)

#: ``error_summary`` of a clean's ledger row starts with this (it is an audit row, not a load)
AUDIT_PREFIX = "clean: "


class CleanRefusedError(DltOpsError):
    """The clean cannot be done whole, so nothing was done."""

    exit_code = 1


class CleanFailedError(DltOpsError):
    """The clean started and failed; its ledger row says how far it got."""

    exit_code = 1


@dataclass
class CleanRequest:
    """What the command asked for."""

    source: str
    resources: tuple[str, ...] = ()
    local_only: bool = False
    remote_only: bool = False
    dataset: str | None = None
    include_ledger: bool = False
    trigger_source: str = "cli"
    #: plan only: nothing is written, the run lease is not even probed
    dry_run: bool = False


@dataclass
class PreparedClean:
    """The plan and what executing it needs."""

    plan: CleanPlan
    where: Target
    project: Project
    orphan: bool = False
    removed: list[str] = field(default_factory=list)


def prepare_clean(
    registry: PluginRegistry, config: ProjectConfig, request: CleanRequest
) -> PreparedClean:
    """Check the request and draw the plan; reads only."""
    from dlt_ops.project.discovery import discover
    from dlt_ops.target import resolve_target

    patterns = [r for r in request.resources if r.startswith("re:") or any(c in r for c in "*?[")]
    if patterns:
        raise UsageError(f"resources must be exact names, not patterns: {', '.join(patterns)}.")
    if request.local_only and request.remote_only:
        raise UsageError("--local-only and --remote-only exclude each other.")
    if request.local_only and request.resources:
        raise UsageError(
            "-r with --local-only: dlt would restore the resources' state from the destination "
            "on the next run; clean both halves (drop --local-only) to reset them."
        )
    registry.get("trigger_emitter", request.trigger_source)  # must be registered
    project = discover(config.root)
    orphan = request.source not in project.sources
    if orphan and any(name == request.source for name, _ in project.duplicates):
        project.source(request.source)  # raises DuplicateSourceError
    where = resolve_target(registry, config, request.source, request.dataset)
    # a live run is refused before anything is read: an embedded engine's file is locked by
    # the run, so the plan could not even be drawn
    if not request.dry_run:
        with _lease(registry, config, where, request.source, f"clean-{os.getpid()}"):
            pass
    plan = CleanPlan(
        source=request.source, pipeline_name=where.pipeline_name, engine=where.engine,
        dataset=where.dataset, resources=request.resources, local=not request.remote_only,
        remote=not request.local_only, include_ledger=request.include_ledger,
    )  # fmt: skip
    if orphan:
        plan.notes.append(
            f"no source '{request.source}' in the project: cleaning by name, from what the "
            f"destination holds"
        )
    if plan.local:
        from dlt_ops.clean.plan import local_dirs

        plan.local_dirs = local_dirs(config, where)
    if plan.remote:
        if not where.has_adapter:
            raise CleanRefusedError(
                f"destination '{where.engine}' has no DestinationAdapter: the remote half of "
                f"clean needs one, so nothing was done. Clean local state with --local-only, "
                f"or install the engine's adapter package (or list it in [dlt_ops] "
                f"derived_adapters)."
            )
        from dlt_ops.clean.plan import remote_plan

        info = project.sources.get(request.source)
        known = list(info.static_resources) if info and info.static_resources else None
        with _session(registry, config, where, read_only=True) as session:
            remote_plan(plan, session, project, known)
    return PreparedClean(plan, where, project, orphan)


@contextmanager
def _session(
    registry: PluginRegistry, config: ProjectConfig, where: ResolvedDestination, *, read_only: bool
) -> Iterator[DestinationSession]:
    from dlt_ops.destinations import connection_target, load_adapter

    adapter = load_adapter(registry, where.engine)
    target = connection_target(config, where, read_only=read_only,
                               setting_keys=adapter.dlt_setting_keys)  # fmt: skip
    session = DestinationSession.open(adapter, target)
    try:
        yield session
    finally:
        session.close()


def _audit_record(request: CleanRequest, where: ResolvedDestination) -> RunRecord:
    return RunRecord(
        pipeline_name=where.pipeline_name, source_section=request.source,
        resource_name=",".join(request.resources) or None, destination=where.engine,
        dataset=where.dataset, run_id=uuid.uuid4().hex, dlt_run_id=None, backfill_id=None,
        trigger_source=request.trigger_source, started_at=utcnow(), completed_at=None,
        status=RunStatus.running, records_extracted=None, records_loaded=None,
        error_summary=None, host=socket.gethostname(), pid=os.getpid(),
        dltops_version=__version__,
    )  # fmt: skip


def _refuse_if_running(sinks: list[tuple[str, Any]], config: ProjectConfig, source: str) -> None:
    """A ``running`` ledger row of ``source`` with a fresh heartbeat: refuse, naming it."""
    from dlt_ops.ledger.abandoned import dead_on_this_host
    from dlt_ops.ledger.sinks import LedgerQuery, RunReader
    from dlt_ops.ledger.status import is_abandoned

    now = utcnow()
    for _, sink in sinks:
        if not isinstance(sink, RunReader):
            continue
        try:
            rows = sink.read_runs(LedgerQuery(source=source, status="running", limit=50)) or []
        except Exception as exc:  # an unreadable ledger cannot prove the source idle
            raise CleanRefusedError(
                f"cannot tell whether '{source}' is running (ledger unreadable: {exc}); "
                f"nothing was done."
            ) from exc
        for run in rows:
            if is_abandoned(run, now, config.heartbeat_seconds) or dead_on_this_host(run):
                continue
            where = f" (pid {run.pid} on {run.host})" if run.host else ""
            raise CleanRefusedError(
                f"source '{source}' is running: run {run.run_id}{where} holds it; clean "
                f"refuses while a run is live, so nothing was done."
            )


@contextmanager
def _lease(registry: PluginRegistry, config: ProjectConfig, where: Target, source: str,
           run_id: str) -> Iterator[None]:  # fmt: skip
    """Hold the source's run lease for the clean; a busy lease raises (exit 1, naming the
    holder) before anything is removed."""
    from dlt_ops.runner.lease import LeaseBusyError, source_lease

    held = ExitStack()
    try:
        held.enter_context(source_lease(registry, config, where, source=source, run_id=run_id))
    except LeaseBusyError as exc:
        raise CleanRefusedError(
            f"{exc} Clean refuses while a run holds it; nothing was done."
        ) from None
    with held:
        yield


def _delete(session: DestinationSession, rows: RowSet, keep_run: str) -> int:
    where, params = rows.where, rows.params
    if rows.table == "_dlt_ops_runs":  # the audit row of this very clean stays
        where, params = f"{where} AND run_id <> ?", (*params, keep_run)
    stmt = Statement(f"DELETE FROM {{{rows.table}}} WHERE {where}")
    if rows.dataset:
        return session.adapter.execute(session.client, rows.dataset, stmt, params)
    return session.execute(stmt, *params)


def _dlt_drop(config: ProjectConfig, prepared: PreparedClean, session: DestinationSession) -> None:
    """Selective: dlt's own drop (tables with children, the resources' state, a new schema
    version) on a throwaway working dir synced from the destination."""
    from dlt.pipeline.helpers import pipeline_drop

    from dlt_ops.runner.pipeline import build_pipeline, project_environment

    plan = prepared.plan
    with tempfile.TemporaryDirectory(prefix="dltops-clean-") as tmp, \
            project_environment(config.root):  # fmt: skip
        pipeline = build_pipeline(config, plan.source, prepared.where, working_dir=Path(tmp),
                                  adapter=session.adapter)  # fmt: skip
        pipeline.sync_destination()
        for name in plan.schema_names:
            if name not in pipeline.schemas:
                continue
            drop = pipeline_drop(pipeline, resources=list(plan.resources), schema_name=name)
            if not drop.is_empty:
                drop()


def execute_clean(
    registry: PluginRegistry, config: ProjectConfig, request: CleanRequest, prepared: PreparedClean
) -> RunRecord:
    """Carry the plan out; returns the audit row. Raises ``CleanRefusedError`` before
    anything is removed, ``CleanFailedError`` after (the audit row says how far it got)."""
    from dlt_ops.ledger.build import build_sinks

    plan, where = prepared.plan, prepared.where
    session_cm = (_session(registry, config, where, read_only=False)
                  if where.has_adapter else nullcontext(None))  # fmt: skip
    with session_cm as session:
        if session is None:
            opener: Any = _no_session(where.engine)
        else:
            opener = lambda: session  # noqa: E731 - the sinks' lazy opener
        # at core tier there is no ledger table: the other sinks (a jsonl file) stand in
        sinks = build_sinks(registry, config, where, open_session=opener)
        _refuse_if_running(sinks, config, plan.source)
        writer = LedgerWriter(sinks, _audit_record(request, where), heartbeat_seconds=0)
        with _lease(registry, config, where, plan.source, writer.record.run_id):
            writer.start()
            removed = prepared.removed
            try:
                if plan.remote and session is not None:
                    _remote(config, prepared, session, writer.record.run_id, removed)
                for directory in plan.local_dirs:
                    shutil.rmtree(directory)
                    removed.append(f"local {directory}")
            except BaseException as exc:
                done = "; ".join(removed) or "nothing"
                record = writer.finish(
                    RunStatus.failed,
                    error_summary=f"{AUDIT_PREFIX}failed after removing {done}: "
                    f"{summarize_error(exc)}",
                )
                if not isinstance(exc, Exception):
                    raise
                raise CleanFailedError(
                    f"clean of '{plan.source}' failed ({summarize_error(exc)}); removed so far: "
                    f"{done}. Local state was kept for a retry. Audit row {record.run_id}."
                ) from exc
        if plan.remote and session is not None and not plan.selective:
            _free_lease_row(session, plan.source)
        summary = "; ".join(removed) or "nothing to remove"
        return writer.finish(
            RunStatus.completed, records_loaded=0, error_summary=f"{AUDIT_PREFIX}{summary}"[:500]
        )


def _no_session(engine: str) -> Any:
    def refuse() -> DestinationSession:
        raise DltOpsError(f"destination '{engine}' has no DestinationAdapter (core mode)")

    return refuse


def _remote(
    config: ProjectConfig,
    prepared: PreparedClean,
    session: DestinationSession,
    run_id: str,
    removed: list[str],
) -> None:
    plan = prepared.plan
    adapter, client = session.adapter, session.client
    if plan.selective:
        if plan.tables or plan.schema_names:
            _dlt_drop(config, prepared, session)
            removed += [f"table {t}" for t in plan.tables]
    else:
        for table in plan.tables:
            adapter.drop_table(client, plan.dataset, table)
            removed.append(f"table {table}")
    for table in plan.staging_tables:
        adapter.drop_table(client, plan.dataset + STAGING_SUFFIX, table)
        removed.append(f"staging table {table}")
    for rows in plan.rows:
        if rows.count:
            n = _delete(session, rows, run_id)
            removed.append(f"{n} row(s) of {rows.label}")


def _free_lease_row(session: DestinationSession, source: str) -> None:
    """The source's lease row, once the clean gave it back (no holder)."""
    if session.fetch_columns("_dlt_ops_leases") is None:
        return
    session.execute(
        Statement("DELETE FROM {_dlt_ops_leases} WHERE lease_name = ? AND holder IS NULL"), source
    )
