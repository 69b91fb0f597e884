"""``[dlt_ops.lineage]`` is checked when the config loads, key by key."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlt_ops.config import load_project_config
from dlt_ops.errors import ConfigError
from dlt_ops.lineage.ids import backfill_uuid, run_uuid
from dlt_ops.redact import redact


def _load(tmp_path: Path, table: str):  # noqa: ANN202
    (tmp_path / ".dlt").mkdir(exist_ok=True)
    (tmp_path / ".dlt" / "config.toml").write_text(f"[dlt_ops]\n[dlt_ops.lineage]\n{table}\n")
    return load_project_config(tmp_path)


def test_http_with_url_and_key(tmp_path: Path) -> None:
    config = _load(tmp_path, 'transport = "http"\nurl = "http://127.0.0.1:5000"\n'
                             'api_key = "olkey-abcdef"\ntimeout = 3')  # fmt: skip
    lineage = config.lineage
    assert lineage is not None and lineage.namespace == tmp_path.name and lineage.timeout == 3.0
    options = lineage.transport_options()
    assert options["auth"] == {"type": "api_key", "apiKey": "olkey-abcdef"}
    assert redact("key olkey-abcdef") == "key ***"  # the key is masked from now on


def test_file_path_is_relative_to_the_project(tmp_path: Path) -> None:
    lineage = _load(tmp_path, 'transport = "file"\npath = "out/events.jsonl"').lineage
    assert lineage is not None and lineage.path == (tmp_path / "out/events.jsonl").resolve()


def test_absent_table_means_no_lineage(tmp_path: Path) -> None:
    (tmp_path / ".dlt").mkdir()
    (tmp_path / ".dlt" / "config.toml").write_text("[dlt_ops]\n")
    assert load_project_config(tmp_path).lineage is None


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ('transport = "kafka"', "transport must be"),
        ('transport = "http"', "url must be an http"),
        ('transport = "http"\nurl = "ftp://x"', "url must be an http"),
        ('transport = "file"', "needs path"),
        ('transport = "console"\ntimeout = 0', "timeout must be"),
        ('transport = "console"\nurll = "x"', "unknown key(s) urll"),
        ('transport = "console"\napi_key_env = "DLTOPS_UNSET_VAR_X"', "is not set"),
    ],
)
def test_bad_tables_are_config_errors(tmp_path: Path, table: str, says: str) -> None:
    with pytest.raises(ConfigError, match=None) as info:
        _load(tmp_path, table)
    assert says in str(info.value)


def test_run_ids_map_to_stable_uuids() -> None:
    plain = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
    assert run_uuid(plain) == "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"  # already a UUID
    chunk = "3fa94c1d2b7e6a50"  # a backfill chunk's sha256 prefix
    assert run_uuid(chunk) == run_uuid(chunk) != run_uuid("3fa94c1d2b7e6a51")
    assert backfill_uuid("bf1") != run_uuid("bf1")


@pytest.mark.parametrize(
    ("engine", "database", "namespace"),
    [
        ("duckdb", "/data/p.duckdb", "duckdb:///data/p.duckdb"),
        ("postgres", "postgresql://loader@db.internal:5433/warehouse",
         "postgres://db.internal:5433/warehouse"),
        ("postgres", "postgresql://loader:***@db.internal/warehouse", "postgres://db.internal/warehouse"),
        ("bigquery", "", "bigquery"),
    ],
)  # fmt: skip
def test_dataset_namespace_names_the_database_without_its_user(
    engine: str, database: str, namespace: str
) -> None:
    from dlt_ops.builtin.lineage import dataset_namespace
    from dlt_ops.target import Target

    target = Target(engine=engine, dataset="ds", pipeline_name="p", database=database)
    assert dataset_namespace(target) == namespace


def test_orchestrator_parent_from_the_environment_or_the_run_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from dlt_ops.builtin.lineage import orchestrator_run

    for name in ("AIRFLOW_CTX_DAG_ID", "AIRFLOW_CTX_DAG_RUN_ID", "AIRFLOW_CTX_TASK_ID"):
        monkeypatch.delenv(name, raising=False)
    dagster_run = "5f0c6a8e-3b1d-4c2a-9e7f-0123456789ab"
    parent = orchestrator_run(f"dagster:{dagster_run}:orders")
    assert parent is not None and (parent.namespace, parent.name, parent.run_id) == (
        "dagster", "orders", dagster_run,
    )  # fmt: skip
    assert orchestrator_run("0f1e2d3c4b5a69788796a5b4c3d2e1f0") is None
    monkeypatch.setenv("AIRFLOW_CTX_DAG_ID", "loads")
    monkeypatch.setenv("AIRFLOW_CTX_DAG_RUN_ID", "scheduled__1")
    airflow = orchestrator_run("airflow:loads:scheduled__1:orders:1")
    assert airflow is not None and (airflow.namespace, airflow.name) == ("airflow", "loads")
