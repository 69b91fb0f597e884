"""Receipts: every row reconciles, and rows_loaded is what landed, on each feature path."""

from __future__ import annotations

import json
import types
from pathlib import Path

import duckdb
import pytest

from dlt_ops import hookimpl
from dlt_ops.config import load_project_config
from dlt_ops.plugins import PluginRegistry
from dlt_ops.receipts.render import receipt_table, total_line
from dlt_ops.receipts.service import find_run
from dlt_ops.runner.run import RunRequest, execute_run

BASE = """
[dlt_ops]
default_destination = "{dest}"
default_dataset = "ds"

[sources.events_src.dlt_ops]
schedule = "@daily"
{extra}
"""
WARN = """
[sources.events_src.dlt_ops.assertions.events]
required_columns = { value = ["missing_col"], on_failure = "warn" }
"""
QUARANTINE = """
[sources.events_src.dlt_ops.assertions.events]
unique_columns = { value = ["kind"], on_failure = "quarantine" }
"""
FAIL = """
[sources.events_src.dlt_ops.assertions.events]
min_rows_per_load = 10
"""
COST = """
[sources.events_src.dlt_ops.cost]
per_record = 0.01
per_page = 0.5
"""


class Engine:
    """One destination for the receipt tests: its config name, env and a row counter."""

    def __init__(self, name: str, env: dict[str, str], count) -> None:  # noqa: ANN001
        self.name, self.env, self.count = name, env, count


@pytest.fixture(params=["duckdb", "postgres"])
def engine(request: pytest.FixtureRequest) -> Engine:
    if request.param == "duckdb":
        return Engine("duckdb", {}, None)
    import psycopg

    db = request.getfixturevalue("postgres_database")

    def count(root: Path, sql: str) -> int:
        with psycopg.connect(db.url, autocommit=True) as conn:
            return conn.execute(sql).fetchone()[0]

    return Engine("postgres", {"DESTINATION__POSTGRES__CREDENTIALS": db.dlt_url}, count)


def _count(engine: Engine, root: Path, sql: str) -> int:
    if engine.count is not None:
        return engine.count(root, sql)
    with duckdb.connect(str(root / "events_src_pipeline.duckdb"), read_only=True) as con:
        return con.execute(sql).fetchone()[0]


def _check(row: dict) -> None:
    parts = row["filtered"] + row["rejected"] + row["failed"] + row["records_out"]
    assert row["records_in"] == parts, f"receipt does not reconcile: {row}"


def _show(cli, root: Path, env: dict | None = None) -> dict:  # noqa: ANN001
    proc = cli("runs", "show", "last", "--json", cwd=root, env=env)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    for row in doc["receipt"]:
        _check(row)
    return doc


def _root_rows(root: Path, engine: Engine | None = None) -> int:
    return _count(engine or Engine("duckdb", {}, None), root, "SELECT count(*) FROM ds.events")


def _run(cli, root: Path, env: dict | None = None) -> int:  # noqa: ANN001
    return cli("pipeline", "run", "-s", "events_src", "-y", cwd=root, env=env).returncode


def test_example_receipt(tmp_path: Path, cli) -> None:  # noqa: ANN001
    assert cli("init", "demo", "--example", cwd=tmp_path).returncode == 0
    demo = tmp_path / "demo"
    run = cli("pipeline", "run", "-s", "demo_events", "-y", "--json", cwd=demo)
    assert run.returncode == 0
    json.loads(run.stdout)  # stdout stays one JSON document; the receipt went to stderr
    assert "resource  in  out" in run.stderr
    (row,) = _show(cli, demo)["receipt"]
    assert (row["records_in"], row["records_out"], row["rows_loaded"]) == (6, 6, 6)
    assert row["resource_name"] == "events" and row["pages"] == 3


def test_plain_then_incremental_run_filters_seen_rows(project, templates, cli, engine) -> None:  # noqa: ANN001
    root = project(BASE.format(dest=engine.name, extra=""), {"events_src": templates["events"]})
    assert _run(cli, root, engine.env) == 0
    (first,) = _show(cli, root, engine.env)["receipt"]
    assert (first["records_in"], first["records_out"], first["rows_loaded"]) == (6, 6, 6)
    assert _root_rows(root, engine) == 6
    assert _run(cli, root, engine.env) == 0
    (second,) = _show(cli, root, engine.env)["receipt"]
    assert second["records_in"] == 6 and second["filtered"] == 6
    assert second["records_out"] == 0 and second["rows_loaded"] == 0
    assert _root_rows(root, engine) == 6


def test_warn_counts_and_loads(project, templates, cli, engine) -> None:  # noqa: ANN001
    root = project(BASE.format(dest=engine.name, extra=WARN), {"events_src": templates["events"]})
    assert _run(cli, root, engine.env) == 0
    (row,) = _show(cli, root, engine.env)["receipt"]
    assert row["warned"] == 6 and row["records_out"] == 6 and row["rows_loaded"] == 6
    assert _root_rows(root, engine) == 6


def test_quarantine_rejected_matches_dlt_rejected(project, templates, cli, engine) -> None:  # noqa: ANN001
    root = project(
        BASE.format(dest=engine.name, extra=QUARANTINE), {"events_src": templates["events"]}
    )
    assert _run(cli, root, engine.env) == 0
    doc = _show(cli, root, engine.env)
    (row,) = doc["receipt"]
    assert row["rejected"] == 3 and row["records_out"] == 3 and row["rows_loaded"] == 3
    run_id = doc["run"]["run_id"]
    sql = f"SELECT count(*) FROM ds._dlt_rejected WHERE run_id = '{run_id}'"  # a uuid4 hex
    assert _count(engine, root, sql) == row["rejected"]
    assert _root_rows(root, engine) == 3


def test_fail_loads_nothing_and_still_writes_a_receipt(project, templates, cli, engine) -> None:  # noqa: ANN001
    root = project(BASE.format(dest=engine.name, extra=FAIL), {"events_src": templates["events"]})
    assert _run(cli, root, engine.env) == 1
    doc = _show(cli, root, engine.env)
    assert doc["run"]["status"] == "failed"
    (row,) = doc["receipt"]
    assert row["failed"] == 6 and row["records_out"] == 0 and row["rows_loaded"] == 0
    assert "min_rows_per_load" in row["failure_reason"]
    text = cli("runs", "show", "last", cwd=root, env=engine.env).stdout
    assert "events: 6 failed — AssertionFailedError" in text


def test_estimated_cost_and_total_line(project, templates, cli) -> None:  # noqa: ANN001
    root = project(BASE.format(dest="duckdb", extra=COST), {"events_src": templates["events"]})
    assert _run(cli, root) == 0
    (row,) = _show(cli, root)["receipt"]
    assert row["cost_basis"] == "estimated"
    assert row["cost"] == pytest.approx(6 * 0.01 + 1 * 0.5)
    assert "total: $0.5600 (estimated)" in cli("runs", "show", "last", cwd=root).stdout


def _measured_duckdb() -> types.ModuleType:
    from dltops_duckdb.adapter import DuckDBAdapter

    class MeasuredDuckDB(DuckDBAdapter):
        def measured_cost(self, client: object, dataset: str, run: object) -> float:
            return 0.25

    mod = types.ModuleType("measured_duckdb_plugin")

    @hookimpl
    def dlt_ops_register_destinations(register):  # noqa: ANN001, ANN202
        register(MeasuredDuckDB, name="duckdb")

    mod.dlt_ops_register_destinations = dlt_ops_register_destinations
    return mod


def test_measured_and_estimated_costs_split_on_the_total_line(project, templates) -> None:  # noqa: ANN001
    root = project(BASE.format(dest="duckdb", extra=COST), {"events_src": templates["events"]})
    registry = PluginRegistry(picks={"destination": {"duckdb": "measured_duckdb_plugin"}})
    registry.add_plugin(_measured_duckdb(), name="duckdb", kind="destination")
    config = load_project_config(root)
    outcome = execute_run(registry, config, RunRequest("events_src"))
    assert outcome.ok
    (report,) = outcome.reports  # the receipts observer's table, printed by `pipeline run`
    assert report.endswith("total: $0.8100 ($0.2500 measured + $0.5600 estimated)")
    receipts = find_run(registry, config, ["events_src"], outcome.record.run_id).receipts
    (row,) = receipts
    assert row.cost_basis == "mixed"
    assert row.cost_measured == pytest.approx(0.25)
    assert row.cost_estimated == pytest.approx(0.56)
    assert total_line(receipts) == "total: $0.8100 ($0.2500 measured + $0.5600 estimated)"
    assert receipt_table(
        [row.replace(cost_estimated=None, cost=0.25, cost_basis="measured")]
    ).endswith("total: $0.2500")


def test_receipts_reach_the_jsonl_sink(project, templates, cli) -> None:  # noqa: ANN001
    extra = '\n[dlt_ops.ledger_sink.jsonl]\npath = "runs.jsonl"\n'
    config = BASE.format(dest="duckdb", extra=extra).replace(
        'default_dataset = "ds"', 'default_dataset = "ds"\nledger_sinks = ["destination", "jsonl"]'
    )
    root = project(config, {"events_src": templates["events"]})
    assert _run(cli, root) == 0
    lines = [json.loads(x) for x in (root / "runs.jsonl").read_text().splitlines()]
    receipts = [x for x in lines if x["event"] == "receipt"]
    assert len(receipts) == 1 and receipts[0]["records_out"] == 6
