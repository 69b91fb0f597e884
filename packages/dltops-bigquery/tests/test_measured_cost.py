"""Measured cost from BigQuery's own job statistics, on recorded job resources (the emulator
bills nothing, so the jobs are rebuilt from API responses as BigQuery returns them)."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from dlt_ops.receipts.build import build_receipts
from dlt_ops.receipts.counting import Tallies
from dltops_bigquery._cost import TIB
from dltops_bigquery.adapter import BigQueryAdapter, BigQueryConnection

STARTED = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
ENDED = datetime(2026, 1, 5, 12, 3, tzinfo=UTC)
MB = 2**20


def _ref(dataset: str, table: str) -> dict[str, str]:
    return {"projectId": "p", "datasetId": dataset, "tableId": table}


def _query(
    job_id: str, billed: int | None, *tables: dict, processed: int = 0, **status: Any
) -> dict:
    stats: dict[str, Any] = {
        "totalBytesProcessed": str(processed),
        "referencedTables": list(tables),
    }
    if billed is not None:
        stats["totalBytesBilled"] = str(billed)
    return {
        "jobReference": {"projectId": "p", "jobId": job_id, "location": "US"},
        "configuration": {"jobType": "QUERY", "query": {"query": "MERGE ..."}},
        "statistics": {"creationTime": "1767614400000", "query": stats},
        "status": {"state": "DONE", **status},
    }


def _load(job_id: str, table: dict) -> dict:
    return {
        "jobReference": {"projectId": "p", "jobId": job_id, "location": "US"},
        "configuration": {"jobType": "LOAD", "load": {"destinationTable": table}},
        "statistics": {"creationTime": "1767614400000", "load": {"outputBytes": "4096"}},
        "status": {"state": "DONE"},
    }


#: What list_jobs answered for a dlt merge load into dataset ``ds`` (plus unrelated jobs).
RECORDED = [
    _load("load_staging", _ref("ds_staging", "events")),  # batch loads are free
    _query("merge", 30 * MB, _ref("ds_staging", "events"), _ref("ds", "events")),
    _query("ledger_insert", 10 * MB, _ref("ds", "_dlt_ops_runs")),
    _query("no_billed_figure", None, _ref("ds", "events"), processed=5 * MB),
    _query("other_dataset", 999 * MB, _ref("elsewhere", "t")),
    _query("failed", 999 * MB, _ref("ds", "events"), errorResult={"reason": "invalidQuery"}),
]


class RecordedJobs:
    """Stands in for the SDK client's ``list_jobs``: returns recorded jobs, records the call."""

    def __init__(self, resources: list[dict]) -> None:
        from google.auth.credentials import AnonymousCredentials
        from google.cloud import bigquery

        sdk = bigquery.Client(project="p", credentials=AnonymousCredentials())
        kinds = {"QUERY": bigquery.QueryJob, "LOAD": bigquery.LoadJob}
        self.jobs = [kinds[r["configuration"]["jobType"]].from_api_repr(r, sdk) for r in resources]
        self.calls: list[dict[str, Any]] = []

    def list_jobs(self, **kwargs: Any) -> list[Any]:
        self.calls.append(kwargs)
        return self.jobs


def _connection(bq: RecordedJobs) -> BigQueryConnection:
    return BigQueryConnection(bq=bq, project="p", location=None, timeout_s=5, query_timeout_s=5)


def test_measured_cost_sums_bytes_billed_by_the_runs_jobs() -> None:
    bq = RecordedJobs(RECORDED)
    run = SimpleNamespace(started_at=STARTED, completed_at=ENDED)
    cost = BigQueryAdapter().measured_cost(_connection(bq), "ds", run)
    assert cost == pytest.approx((30 + 10 + 5) * MB / TIB * 6.25)
    (call,) = bq.calls
    assert call["min_creation_time"] == STARTED and call["max_creation_time"] == ENDED


def test_no_jobs_on_the_dataset_is_no_measurement() -> None:
    bq = RecordedJobs([RECORDED[4]])
    run = SimpleNamespace(started_at=STARTED, completed_at=ENDED)
    assert BigQueryAdapter().measured_cost(_connection(bq), "ds", run) is None


def test_a_receipt_with_the_measured_cost_has_basis_measured() -> None:
    run = SimpleNamespace(started_at=STARTED, completed_at=ENDED)
    cost = BigQueryAdapter().measured_cost(_connection(RecordedJobs(RECORDED)), "ds", run)
    tallies = Tallies()
    tallies.of("events").records_in = 3
    (row,) = build_receipts(
        run_id="r1", run_started_at=STARTED, pipeline_name="p", source="s", tallies=tallies,
        verdicts={}, trace=None, phase="done", rates={}, measured_cost=cost,
    )  # fmt: skip
    assert row.cost_basis == "measured" and row.cost == pytest.approx(cost)
