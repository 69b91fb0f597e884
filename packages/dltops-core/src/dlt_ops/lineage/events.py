"""A run's facts as an OpenLineage ``RunEvent``, built with openlineage-python's own classes.

The facts are plain values (``RunFacts``) gathered by the lifecycle plugin, so this module
knows nothing of dlt or the runner; the client's attrs classes check what the spec requires
(UUID run ids, ISO-8601 times). Every string that could carry a secret is redacted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from dlt_ops.redact import redact

if TYPE_CHECKING:
    from openlineage.client.event_v2 import RunEvent

#: the producer URI every event carries
PRODUCER = "https://github.com/dlt-ops/dlt-ops"


@dataclass(frozen=True)
class JobRef:
    """A job and one of its runs: a parent (the backfill) or a root (the Airflow DAG run)."""

    namespace: str
    name: str
    run_id: str


@dataclass(frozen=True)
class OutputTable:
    """One destination table the run wrote (or meant to write)."""

    namespace: str
    name: str
    #: ``(column, dlt data type)`` from dlt's stored schema, in column order
    columns: tuple[tuple[str, str], ...] = ()
    #: rows the run loaded into it (the receipt's figure); ``None`` before or without a load
    row_count: int | None = None


@dataclass(frozen=True)
class RunFacts:
    """What one event says about one run."""

    state: str  # START, COMPLETE, FAIL or ABORT
    event_time: datetime
    namespace: str
    job_name: str
    run_id: str
    parent: JobRef | None = None
    root: JobRef | None = None
    window: tuple[datetime, datetime] | None = None
    outputs: tuple[OutputTable, ...] = ()
    error: str | None = None
    stack_trace: str | None = None
    dlt_version: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _iso(ts: datetime) -> str:
    return ts.isoformat()


def _run_facets(facts: RunFacts) -> dict[str, Any]:
    from openlineage.client.facet_v2 import (
        error_message_run,
        nominal_time_run,
        parent_run,
        processing_engine_run,
    )

    facets: dict[str, Any] = {}
    if facts.dlt_version:
        facets["processing_engine"] = processing_engine_run.ProcessingEngineRunFacet(
            version=facts.dlt_version, name="dlt", openlineageAdapterVersion=None
        )
    if facts.window is not None:
        facets["nominalTime"] = nominal_time_run.NominalTimeRunFacet(
            nominalStartTime=_iso(facts.window[0]), nominalEndTime=_iso(facts.window[1])
        )
    if facts.parent is not None:
        root = facts.root or facts.parent
        facets["parent"] = parent_run.ParentRunFacet(
            run=parent_run.Run(runId=facts.parent.run_id),
            job=parent_run.Job(namespace=facts.parent.namespace, name=facts.parent.name),
            root=parent_run.Root(
                run=parent_run.RootRun(runId=root.run_id),
                job=parent_run.RootJob(namespace=root.namespace, name=root.name),
            ),
        )
    if facts.error is not None:
        facets["errorMessage"] = error_message_run.ErrorMessageRunFacet(
            message=redact(facts.error),
            programmingLanguage="python",
            stackTrace=redact(facts.stack_trace) if facts.stack_trace else None,
        )
    return facets


def _output(table: OutputTable) -> Any:
    from openlineage.client.event_v2 import OutputDataset
    from openlineage.client.facet_v2 import output_statistics_output_dataset, schema_dataset

    facets: dict[str, Any] = {}
    if table.columns:
        facets["schema"] = schema_dataset.SchemaDatasetFacet(
            fields=[
                schema_dataset.SchemaDatasetFacetFields(name=n, type=t) for n, t in table.columns
            ]  # fmt: skip
        )
    output_facets: dict[str, Any] = {}
    if table.row_count is not None:
        output_facets["outputStatistics"] = (
            output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet(
                rowCount=table.row_count
            )
        )
    return OutputDataset(
        namespace=redact(table.namespace), name=table.name, facets=facets,
        outputFacets=output_facets,
    )  # fmt: skip


def build_event(facts: RunFacts) -> RunEvent:
    """The ``RunEvent`` for ``facts`` (openlineage-python checks the run id and times)."""
    from openlineage.client.event_v2 import Job, Run, RunEvent, RunState
    from openlineage.client.facet_v2 import job_type_job

    job_facets: dict[str, Any] = {
        "jobType": job_type_job.JobTypeJobFacet(
            processingType="BATCH", integration="DLT", jobType="JOB"
        )
    }
    return RunEvent(
        eventType=RunState(facts.state),
        eventTime=_iso(facts.event_time),
        run=Run(runId=facts.run_id, facets=_run_facets(facts)),
        job=Job(namespace=facts.namespace, name=facts.job_name, facets=job_facets),
        outputs=[_output(t) for t in facts.outputs],
        producer=PRODUCER,
    )
