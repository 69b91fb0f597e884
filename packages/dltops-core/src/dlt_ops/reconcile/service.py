"""``reconcile``: per source, compare every table dlt created with the declared models.

Per source: resolve its destination (an adapter is needed: the drift state lives in
``_dlt_ops_drift``), import and instantiate the source once, read the dlt schema the
destination stores to find the resource's tables, read their live columns through dlt's own
client (dlt's types, whatever the engine), compare, merge with the stored state, and alert the
configured sinks once per new drift. Data tables are only read.
"""

from __future__ import annotations

import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dlt_ops.clock import utcnow
from dlt_ops.errors import DltOpsError
from dlt_ops.log import get_logger
from dlt_ops.reconcile.model import DriftFinding, RemovalSettings, SourceReport
from dlt_ops.redact import redact

if TYPE_CHECKING:
    from dlt_ops.adapters import DestinationSession
    from dlt_ops.alerts import Alert
    from dlt_ops.config import ProjectConfig
    from dlt_ops.destinations import ResolvedDestination
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.project import Project
    from dlt_ops.reconcile.detect import LiveColumns

log = get_logger(__name__)


class ReconcileError(DltOpsError):
    """A source could not be reconciled (its report carries the reason)."""


@dataclass
class ReconcileRequest:
    """What the command asked for."""

    sources: tuple[str, ...] = ()
    all_sources: bool = False
    dataset: str | None = None
    include_removal: bool = False
    dry_run: bool = False
    ack: bool = False
    trigger_source: str = "cli"
    now: datetime = field(default_factory=utcnow)
    reconcile_id: str = field(default_factory=lambda: uuid.uuid4().hex)


@dataclass
class ReconcileResult:
    """Every source's report, and how many alerts were delivered."""

    reports: list[SourceReport]
    alerts_sent: int = 0
    dry_run: bool = False

    @property
    def failed(self) -> bool:
        """Some source could not be reconciled (exit 1)."""
        return any(r.error for r in self.reports)

    @property
    def open_findings(self) -> list[DriftFinding]:
        """Unacknowledged findings of every source."""
        return [f for r in self.reports for f in r.open_findings]

    def as_json(self) -> dict[str, Any]:
        """The ``--json`` document."""
        return {
            "dry_run": self.dry_run,
            "alerts_sent": self.alerts_sent,
            "sources": [r.as_json() for r in self.reports],
        }


def _describe(exc: BaseException) -> str:
    return redact(" ".join(f"{type(exc).__name__}: {exc}".split()))[:500]


def reconcile(
    registry: PluginRegistry,
    config: ProjectConfig,
    request: ReconcileRequest,
    on_progress: Callable[[str], None] | None = None,
) -> ReconcileResult:
    """Reconcile the requested sources; a source that fails is reported, never fatal to the
    others. Discovery problems (an unparsable module, a duplicate source) are reported too.
    ``on_progress`` is told which source is being reconciled."""
    from dlt_ops.alerts.dispatch import build_alert_sinks
    from dlt_ops.project.discovery import discover

    project = discover(config.root)
    reports: list[SourceReport] = []
    if request.all_sources:
        names = sorted(project.sources)
        for bad in project.unloadable:
            reports.append(SourceReport(f"<{bad.path.name}>", error=f"discovery: {bad.error}"))
        for name, paths in project.duplicates:
            where = ", ".join(str(p) for p in paths)
            reports.append(SourceReport(name, error=f"discovery: defined twice ({where})"))
        if not names and not reports:
            reports.append(SourceReport("<project>", error="discovery found no source"))
    else:
        names = list(request.sources)
    sinks = [] if request.dry_run else build_alert_sinks(registry, config)
    sent = 0
    for i, name in enumerate(names, 1):
        if on_progress is not None:
            on_progress(f"{name} ({i}/{len(names)})")
        started = time.monotonic()
        report = SourceReport(name)
        try:
            reconcile_source(registry, config, project, name, request, report)
        except Exception as exc:  # one broken source never hides the others' drift
            report.error = _describe(exc)
            log.error("reconcile.source_failed", source=name, error=report.error)
        report.duration_s = time.monotonic() - started
        new = [f for f in report.findings if f.new]
        if new and sinks and report.error is None:
            from dlt_ops.alerts.dispatch import send_all

            sent += send_all(sinks, _drift_alert(config, name, request, new, report))
        reports.append(report)
    return ReconcileResult(reports, sent, request.dry_run)


def _drift_alert(
    config: ProjectConfig,
    source: str,
    request: ReconcileRequest,
    new: list[DriftFinding],
    report: SourceReport,
) -> Alert:
    from dlt_ops.alerts import Alert, AlertKind
    from dlt_ops.destinations import resolve_destination

    where = resolve_destination(config, source, request.dataset)
    listed = "; ".join(f"{f.table}.{f.column}: {f.kind} ({f.detail})" for f in new[:10])
    more = f"; and {len(new) - 10} more" if len(new) > 10 else ""
    return Alert(
        kind=AlertKind.schema_drift,
        source=source,
        run_id=request.reconcile_id,
        pipeline_name=where.pipeline_name,
        destination=where.engine,
        dataset=where.dataset,
        trigger_source=request.trigger_source,
        started_at=request.now,
        completed_at=utcnow(),
        message=redact(f"{len(new)} new drifted column(s): {listed}{more}"),
        drift=tuple(f.as_json() for f in new),
    )


@contextmanager
def _throwaway_pipeline(
    config: ProjectConfig, source: str, where: ResolvedDestination, adapter: Any
) -> Iterator[Any]:
    """A dlt pipeline on the source's destination with a temporary working dir (never the
    project's: reconcile leaves no local state behind)."""
    from dlt_ops.runner.pipeline import build_pipeline

    with tempfile.TemporaryDirectory(prefix="dltops-reconcile-") as tmp:
        yield build_pipeline(config, source, where, working_dir=Path(tmp), adapter=adapter)


def _live_columns(pipeline: Any, tables: list[str]) -> dict[str, LiveColumns]:
    """Live columns of ``tables`` with dlt's data types, read through dlt's own client (on an
    ad hoc schema: the throwaway pipeline holds none)."""
    if not tables:
        return {}
    with pipeline.destination_client() as client:
        return {
            table: {n: c.get("data_type") for n, c in columns.items()}
            for table, columns in client.get_storage_tables(tables)
        }


def reconcile_source(
    registry: PluginRegistry,
    config: ProjectConfig,
    project: Project,
    name: str,
    request: ReconcileRequest,
    report: SourceReport,
) -> None:
    """Fill ``report`` for one source (raises what stops it)."""
    from dlt_ops.destinations import load_adapter, open_session
    from dlt_ops.dlt_schema import stored_schema
    from dlt_ops.project.introspect import load_source
    from dlt_ops.reconcile.declared import declared_tables, resource_model
    from dlt_ops.reconcile.detect import Reproducer, Scope, schema_drift
    from dlt_ops.reconcile.state import DriftState
    from dlt_ops.runner.pipeline import project_environment
    from dlt_ops.secrets import engage_secrets
    from dlt_ops.target import resolve_target

    project.source(name)  # unknown source: reported with the list of known ones
    where = resolve_target(registry, config, name, request.dataset)
    if not where.has_adapter:
        raise ReconcileError(
            f"destination '{where.engine}' has no DestinationAdapter (core tier): reconcile "
            f"keeps its drift state in {where.dataset}._dlt_ops_drift and needs one. Install "
            f"the engine's adapter package, or list the engine in [dlt_ops] derived_adapters."
        )
    adapter = load_adapter(registry, where.engine)
    with project_environment(config.root):
        loaded = load_source(project, config, name)
        engage_secrets(config, registry, name)
        assert loaded.source_fn is not None
        source = loaded.source_fn()  # the one instantiation
        naming = source.schema.naming
        # a reader first: a source never loaded has nothing to reconcile, and opening its
        # embedded database for writing would create the file
        with open_session(registry, config, where, read_only=True) as reader:
            stored = stored_schema(reader, source.schema.name)
        if stored is None:
            report.notes.append(
                f"schema '{source.schema.name}' is not in {where.dataset} yet (never loaded)"
            )
            return
        session: DestinationSession = open_session(registry, config, where)
        try:
            ignored = frozenset(
                naming.normalize_identifier(c)
                for c in (*config.injected_columns, *config.source(name).injected_columns,
                          *([config.load_timestamp_column] if config.load_timestamp_column else []))
            )  # fmt: skip
            scopes: list[Scope] = []
            for resource in source.resources.values():
                model = resource_model(resource)
                tables = stored.tables_of(resource.name)
                if model is None:
                    report.notes.append(f"{resource.name}: no Pydantic model declared: skipped")
                    continue
                if not tables:
                    report.notes.append(f"{resource.name}: no table loaded yet: skipped")
                    continue
                declared: dict[str, Any] = {}
                for root in (t for t in tables if not stored.parents.get(t)):
                    declared.update(declared_tables(model, root, naming))
                scopes.append(Scope(name, resource.name, tables, declared, ignored))
            with _throwaway_pipeline(config, name, where, adapter) as pipeline:
                live = _live_columns(pipeline, [t for s in scopes for t in s.tables])
            reproduce = Reproducer(adapter, where.dataset)
            found: list[DriftFinding] = []
            for scope in scopes:
                findings, notes = schema_drift(scope, live, reproduce)
                found += findings
                report.notes += notes
                if request.include_removal:
                    found += _removal(
                        config, name, scope, live, session, request, report, reproduce
                    )
            state = DriftState(session, name, where.pipeline_name)
            report.findings = state.annotate(found, request.now)
            if not request.dry_run:
                examined = {t for s in scopes for t in s.tables}
                state.save(report.findings, examined, request.now)
                if request.ack:
                    report.findings = state.acknowledge(report.findings, request.now)
        finally:
            session.close()


def _removal(
    config: ProjectConfig,
    name: str,
    scope: Any,
    live: dict[str, LiveColumns],
    session: DestinationSession,
    request: ReconcileRequest,
    report: SourceReport,
    reproduce: Any,
) -> list[DriftFinding]:
    from dlt_ops.reconcile.detect import removal_drift

    ts = config.load_timestamp_column
    if not ts:
        note = ("removal skipped: [dlt_ops] load_timestamp_column is not set (removal drift "
                "needs a time axis)")  # fmt: skip
        if note not in report.notes:
            report.notes.append(note)
        return []
    settings = RemovalSettings.merged(config.reconcile, config.source(name).reconcile)
    findings, notes = removal_drift(scope, live, session, ts, settings, request.now, reproduce)
    report.notes += notes
    return findings
