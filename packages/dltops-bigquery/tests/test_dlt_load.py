"""A real dlt load into the emulator through dlt's own bigquery destination, then read back
through the adapter: the adapter sees exactly the table dlt created."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from dlt_ops.adapters import ConnectionTarget, Statement
from dltops_bigquery.adapter import BigQueryAdapter

pytestmark = [
    pytest.mark.integration,
    pytest.mark.filterwarnings("ignore:Cannot create BigQuery Storage client:UserWarning"),
]


@pytest.fixture
def dlt_on_emulator(bigquery_emulator: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Point dlt's bigquery destination at the emulator; never run real google.auth.default."""
    import google.auth
    from google.auth.credentials import AnonymousCredentials

    monkeypatch.setenv("BIGQUERY_EMULATOR_HOST", bigquery_emulator.emulator_host)
    monkeypatch.setenv("DESTINATION__BIGQUERY__CREDENTIALS__PROJECT_ID", bigquery_emulator.project)
    monkeypatch.setenv("NORMALIZE__DATA_WRITER__DISABLE_COMPRESSION", "true")
    monkeypatch.setenv("RUNTIME__DLTHUB_TELEMETRY", "false")
    monkeypatch.setattr(
        google.auth,
        "default",
        lambda *a, **k: (AnonymousCredentials(), bigquery_emulator.project),
    )
    return bigquery_emulator


def test_dlt_load_is_visible_to_adapter(dlt_on_emulator: Any, tmp_path: Path) -> None:
    import dlt

    dataset = f"dlt_load_{uuid.uuid4().hex[:10]}"
    rows = [
        {
            "id": i,
            "name": f"order-{i}",
            "amount": i * 1.25,
            "paid": i % 2 == 0,
            "created_at": datetime(2026, 1, 1, 0, 0, i, tzinfo=UTC),
        }
        for i in range(37)
    ]
    pipeline = dlt.pipeline(
        pipeline_name=f"bq_{dataset}",
        destination="bigquery",
        dataset_name=dataset,
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    info = pipeline.run(rows, table_name="orders", write_disposition="append")
    assert not info.has_failed_jobs

    adapter = BigQueryAdapter()
    target = ConnectionTarget(
        "bigquery",
        dataset,
        tmp_path,
        credentials={"project_id": dlt_on_emulator.project},
        options=dlt_on_emulator.connection_options(),
    )
    client = adapter.connect(target)
    try:
        columns = adapter.fetch_columns(client, dataset, "orders")
        assert columns is not None
        names = [c.name for c in columns]
        assert names[:5] == ["id", "name", "amount", "paid", "created_at"]
        assert {"_dlt_load_id", "_dlt_id"} <= set(names)
        types = {c.name: c.data_type for c in columns}
        assert types["id"] == "INT64" and types["created_at"] == "TIMESTAMP"
        assert types["paid"] == "BOOL" and types["amount"] == "FLOAT64"
        count = Statement("SELECT COUNT(*), SUM(id) FROM {orders} WHERE paid = ?")
        assert adapter.query(client, dataset, count, (True,)) == [(19, sum(range(0, 37, 2)))]
        assert adapter.fetch_columns(client, dataset, "_dlt_loads") is not None
        loads = adapter.query(client, dataset, Statement("SELECT load_id FROM {_dlt_loads}"))
        assert [r[0] for r in loads] == list(info.loads_ids)
    finally:
        client.bq.delete_dataset(dataset, delete_contents=True, not_found_ok=True, timeout=30)
        adapter.close(client)
