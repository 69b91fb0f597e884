"""OpenLineage as a lifecycle plugin (entry point ``lineage`` in ``dlt_ops.lifecycle``).

With ``[dlt_ops.lineage]`` configured, every run and every backfill chunk sends START when its
ledger row is written and COMPLETE, FAIL or ABORT (Ctrl-C/SIGTERM) when it ends. The finish
event names the destination tables the run wrote, with dlt's stored schema and the receipt's
row counts. Best-effort and bounded: see :mod:`dlt_ops.lineage.emitter`. Built only on the
documented lifecycle hooks.
"""

from __future__ import annotations

import os
import traceback
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from dlt_ops import hookimpl
from dlt_ops.clock import utcnow
from dlt_ops.log import get_logger

if TYPE_CHECKING:
    from dlt import Pipeline

    from dlt_ops.config.lineage import LineageConfig
    from dlt_ops.ledger import RunRecord
    from dlt_ops.lineage.events import JobRef, OutputTable, RunFacts
    from dlt_ops.runner.model import RunContext, RunOutcome
    from dlt_ops.target import Target

log = get_logger(__name__)

#: an error's stack trace is cut to this many characters (the head says where it started)
STACK_TRACE_MAX = 8000


def dataset_namespace(target: Target) -> str:
    """``<engine>://<database>``: a URL database loses its user part (never a secret)."""
    database = target.database
    if "://" in database:
        parts = urlsplit(database)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        return f"{target.engine}://{host}{port}{parts.path}"
    return f"{target.engine}://{database}" if database else target.engine


def orchestrator_run(run_id: str) -> JobRef | None:
    """The orchestrator run this dlt-ops run works for: the Airflow task from the
    ``AIRFLOW_CTX_*`` variables Airflow sets in a task's environment, else what the run id
    says (``dlt_ops.dagster`` runs are ``dagster:<dagster run id>:<source>``)."""
    import uuid

    from dlt_ops.lineage.events import JobRef
    from dlt_ops.lineage.ids import orchestrator_uuid

    dag, dag_run = os.environ.get("AIRFLOW_CTX_DAG_ID"), os.environ.get("AIRFLOW_CTX_DAG_RUN_ID")
    if dag and dag_run:
        task = os.environ.get("AIRFLOW_CTX_TASK_ID")
        name = f"{dag}.{task}" if task else dag
        key = f"{dag}:{dag_run}:{task or ''}"
        return JobRef("airflow", name, orchestrator_uuid("airflow", key))
    kind, _, rest = run_id.partition(":")
    if kind == "dagster" and rest.count(":") == 1:
        dagster_run, source = rest.split(":")
        try:  # Dagster's run ids are UUIDs: the same id Dagster's own lineage would use
            parent = str(uuid.UUID(dagster_run))
        except ValueError:
            parent = orchestrator_uuid("dagster", dagster_run)
        return JobRef("dagster", source, parent)
    return None


def _facts(run: RunContext, lineage: LineageConfig, state: str, record: RunRecord) -> RunFacts:
    from dlt_ops.lineage.events import JobRef, RunFacts
    from dlt_ops.lineage.ids import backfill_uuid, run_uuid

    orchestrator = orchestrator_run(run.run_id)
    parent, root = orchestrator, orchestrator
    if run.backfill_id:
        name = f"{run.source}.backfill"
        parent = JobRef(lineage.namespace, name, backfill_uuid(run.backfill_id))
        root = orchestrator or parent
    window = (run.window.start, run.window.end) if run.window is not None else None
    return RunFacts(
        state=state,
        event_time=utcnow(),
        namespace=lineage.namespace,
        job_name=run.source,
        run_id=run_uuid(run.run_id),
        parent=parent,
        root=root,
        window=window,
        dlt_version=record.dlt_version,
    )


def _columns(pipeline: Pipeline | None, table: str) -> tuple[tuple[str, str], ...]:
    if pipeline is None or pipeline.default_schema_name is None:
        return ()
    schema = pipeline.default_schema.tables.get(table) or {}
    return tuple(
        (name, str(column.get("data_type", "unknown")))
        for name, column in schema.get("columns", {}).items()
    )


def output_tables(run: RunContext, outcome: RunOutcome) -> tuple[OutputTable, ...]:
    """The destination tables the run wrote: each resource's root table with the receipt's
    ``rows_loaded``, its nested tables with dlt's per-table counts (they add up to the
    receipt's ``child_rows_loaded``). A run that did not load names the root tables only."""
    from dlt.common.schema.utils import get_nested_tables

    from dlt_ops.builtin.receipts import normalized_tables, receipt_rows
    from dlt_ops.lineage.events import OutputTable

    namespace, dataset = dataset_namespace(run.target), run.target.dataset
    pipeline = outcome.pipeline
    tables = normalized_tables(run.state.tables, pipeline)
    rows = {r.resource_name: r for r in receipt_rows(run, outcome, measure_cost=False)}
    trace = pipeline.last_trace if pipeline is not None else None
    info = getattr(trace, "last_normalize_info", None) if outcome.ok else None
    counts = info.row_counts if info is not None else {}
    out: list[OutputTable] = []
    for resource, table in sorted(tables.items()):
        row = rows.get(resource)
        loaded = row.rows_loaded if row is not None and outcome.ok else None
        out.append(OutputTable(namespace, f"{dataset}.{table}", _columns(pipeline, table), loaded))
        if not outcome.ok or pipeline is None or table not in pipeline.default_schema.tables:
            continue
        for nested in get_nested_tables(pipeline.default_schema.tables, table)[1:]:
            name = nested.get("name")
            if name is not None and name in counts:
                out.append(OutputTable(namespace, f"{dataset}.{name}", _columns(pipeline, name),
                                       counts[name]))  # fmt: skip
    return tuple(out)


def _interrupted(error: BaseException | None) -> bool:
    """Whether a Ctrl-C/SIGTERM is in ``error``'s chain (dlt wraps it)."""
    seen: set[int] = set()
    todo = [error]
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, KeyboardInterrupt):
            return True
        todo += [current.__cause__, current.__context__, getattr(current, "exception", None)]
    return False


def _send(lineage: LineageConfig, facts: RunFacts, *, flush: bool) -> None:
    from dlt_ops.lineage.emitter import emitter_for
    from dlt_ops.lineage.events import build_event

    emitter = emitter_for(lineage)
    emitter.send(build_event(facts))
    if flush:  # the run's end: bounded by [dlt_ops.lineage] timeout
        emitter.flush()


@hookimpl
def dlt_ops_run_started(run: RunContext, record: RunRecord) -> None:
    """START, queued (the run does not wait for it)."""
    lineage = run.config.lineage
    if lineage is None:
        return
    _send(lineage, _facts(run, lineage, "START", record), flush=False)


@hookimpl
def dlt_ops_run_finished(run: RunContext, outcome: RunOutcome) -> None:
    """COMPLETE, FAIL or ABORT with the outputs; waits at most the configured timeout."""
    import dataclasses

    lineage = run.config.lineage
    if lineage is None:
        return
    error = outcome.error
    state = "COMPLETE" if outcome.ok else "ABORT" if _interrupted(error) else "FAIL"
    facts = dataclasses.replace(
        _facts(run, lineage, state, outcome.record), outputs=output_tables(run, outcome)
    )
    if error is not None:
        stack = "".join(traceback.format_exception(error))
        facts = dataclasses.replace(
            facts,
            error=outcome.record.error_summary or f"{type(error).__name__}: {error}",
            stack_trace=stack[:STACK_TRACE_MAX],
        )
    _send(lineage, facts, flush=True)
