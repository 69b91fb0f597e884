"""``dlt_ops.dagster`` on real Dagster (``materialize``, ``execute_in_process``), in Dagster's
own cached venv (issue 31): Definitions from Phase 1 only, a ledger row per asset run with
``trigger_source = dagster`` and the Dagster run id, and partitions that are backfill chunks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.conftest import EVENTS_SOURCE, RAISING_SOURCE, run_cli, write_project
from tests.orchestration.test_airflow import BOOBY_TRAP

CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"

[sources.events_src.dlt_ops]
schedule = "@daily"
backfill_start = 2026-01-01T00:00:00Z
backfill_end = 2026-01-05T00:00:00Z

[sources.broken_src.dlt_ops]
schedule = "cron:15 3 * * *"
timezone = "Europe/Berlin"

[sources.manual_src.dlt_ops]
schedule = "@manual"
"""

#: Load the Definitions (the trap must stay untouched), materialize two sources, print JSON.
MATERIALIZE = """
import json, os, sys
from pathlib import Path
import dagster as dg
from dlt_ops.dagster import build_definitions

defs = build_definitions(sys.argv[1])
trap = Path(os.environ["TRAP_MARKER"]).exists()
specs = {"/".join(s.key.path): {"group": s.group_name,
                                "meta": {k: str(v) for k, v in s.metadata.items()}}
         for s in defs.resolve_all_asset_specs()}
job = defs.resolve_job_def("events_src_backfill")
node = job.graph.node_defs[0]
print(json.dumps({"specs": specs, "trap": trap, "schedules": sorted(s.name for s in defs.schedules),
                  "crons": sorted((s.cron_schedule, s.execution_timezone) for s in defs.schedules),
                  "partitions": job.partitions_def.get_partition_keys(), "pool": node.pool}))
ok = dg.materialize([defs.resolve_assets_def(dg.AssetKey(["events_src", "events"]))])
events = {"/".join(e.asset_key.path): {k: getattr(v, "value", getattr(v, "text", None))
                                       for k, v in e.materialization.metadata.items()}
          for e in ok.get_asset_materialization_events()}
print(json.dumps({"success": ok.success, "run_id": ok.run_id, "events": events}, default=str))
bad = dg.materialize([defs.resolve_assets_def(dg.AssetKey(["broken_src", "rows"]))],
                     raise_on_error=False)
failure = bad.get_step_failure_events()[0].step_failure_data.user_failure_data
print(json.dumps({"success": bad.success, "run_id": bad.run_id,
                  "description": failure.description if failure else None}))
"""


def _json_lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def test_import_without_dagster_names_the_extra() -> None:
    proc = subprocess.run([sys.executable, "-c", "import dlt_ops.dagster"], capture_output=True,
                          text=True, check=False)  # fmt: skip
    last = proc.stderr.strip().splitlines()[-1]
    assert last == 'ImportError: dlt_ops.dagster needs Dagster: pip install "dltops-core[dagster]"'


@pytest.mark.integration
def test_definitions_and_a_materialized_source(dagster_env: Any, tmp_path: Path) -> None:
    sources = {"events_src": EVENTS_SOURCE, "broken_src": RAISING_SOURCE, "manual_src": BOOBY_TRAP}
    root = write_project(tmp_path / "proj", CONFIG, sources)
    trap = tmp_path / "trap"
    proc = dagster_env.run(MATERIALIZE, str(root), env={"TRAP_MARKER": str(trap)})
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    loaded, ran, failed = _json_lines(proc.stdout)[:3]
    # Phase 1 only: the booby-trapped module still gets its asset, and was never imported
    assert loaded["trap"] is False and not trap.exists()
    assert sorted(loaded["specs"]) == ["broken_src/rows", "events_src/events",
                                       "events_src_backfill/events", "manual_src"]  # fmt: skip
    assert loaded["specs"]["events_src_backfill/events"]["group"] == "events_src"
    events = loaded["specs"]["events_src/events"]
    assert events["group"] == "events_src"
    assert events["meta"]["dlt_ops/table"] == "events"
    assert events["meta"]["dagster/table_name"] == "ds.events"
    assert events["meta"]["dlt_ops/incremental_cursors"] == "occurred_at"
    # @manual has no schedule; the two others one each
    assert loaded["schedules"] == ["dlt_cron_15_3_x_x_x_Europe_Berlin", "dlt_daily"]
    assert loaded["crons"] == [["0 0 * * *", "UTC"], ["15 3 * * *", "Europe/Berlin"]]
    assert loaded["partitions"] == ["2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04"]
    assert loaded["pool"] == "dlt_ops/duckdb/ds"  # DuckDB is single-writer
    # the materialization: one ledger row, trigger_source = dagster, the Dagster run id in it
    assert ran["success"] is True
    with duckdb.connect(str(root / "events_src_pipeline.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT trigger_source, status, run_id, records_loaded, "
                           "orchestrator_run_id, orchestrator_try "
                           "FROM ds._dlt_ops_runs").fetchall()  # fmt: skip
        assert con.execute("SELECT count(*) FROM ds.events").fetchone() == (6,)
    # the row names the Dagster run and the step's try (its first: 1)
    assert rows == [("dagster", "completed", f"dagster:{ran['run_id']}:events_src", 6,
                     ran["run_id"], 1)]  # fmt: skip
    shown = run_cli("runs", "show", rows[0][2], cwd=root)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert f"orchestrator run {ran['run_id']}, try 1" in shown.stdout
    meta = ran["events"]["events_src/events"]
    assert meta["dlt_ops/run_id"] == rows[0][2]
    assert meta["dlt_ops/dagster_run_id"] == ran["run_id"]
    assert (meta["dlt_ops/records_in"], meta["dlt_ops/records_out"]) == (6, 6)
    assert meta["dlt_ops/rows_loaded"] == 6
    # a failed run: the ledger's error summary is the step failure
    assert failed["success"] is False
    assert "cannot resolve secret sources.broken_src.api_key" in failed["description"]
    with duckdb.connect(str(root / "broken_src_pipeline.duckdb"), read_only=True) as con:
        bad = con.execute("SELECT trigger_source, status, run_id FROM ds._dlt_ops_runs").fetchall()
    assert bad == [("dagster", "failed", f"dagster:{failed['run_id']}:broken_src")]


#: Execute partitions of ``events_src_backfill``; one JSON line each (the failure's text too).
PARTITION = """
import json, sys
from dlt_ops.dagster import build_definitions

job = build_definitions(sys.argv[1]).resolve_job_def("events_src_backfill")
for key in sys.argv[2:]:
    result = job.execute_in_process(partition_key=key, raise_on_error=False)
    failures = [e.step_failure_data.user_failure_data for e in result.get_step_failure_events()]
    print(json.dumps({"key": key, "success": result.success,
                      "failure": failures[0].description if failures and failures[0] else None}))
"""


@pytest.mark.integration
def test_a_partition_held_by_another_run_fails_without_loading(dagster_env: Any,
                                                               tmp_path: Path) -> None:  # fmt: skip
    from dlt_ops.orchestration import seed_backfill

    root = write_project(tmp_path / "proj", CONFIG, {"events_src": EVENTS_SOURCE})
    start, end = "2026-01-01T00:00:00Z", "2026-01-05T00:00:00Z"
    assert seed_backfill(root, "events_src", start, end, "1d") == [0, 1, 2, 3]
    # another host's worker holds chunk 1 (2026-01-02) under a live lease
    with duckdb.connect(str(root / "events_src_pipeline.duckdb")) as con:
        con.execute(
            "UPDATE ds._dlt_backfills SET status = 'running', claimed_by = 'elsewhere:1:feed', "
            "lease_expires_at = now()::TIMESTAMP + INTERVAL 1 HOUR WHERE chunk_id = '000001'"
        )
    proc = dagster_env.run(PARTITION, str(root), "2026-01-02", "2026-01-03")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    held, ran = _json_lines(proc.stdout)[:2]
    assert held["success"] is False and "by another run" in held["failure"], held
    assert ran["success"] is True, ran
    with duckdb.connect(str(root / "events_src_pipeline.duckdb"), read_only=True) as con:
        runs = con.execute("SELECT trigger_source, status, window_from FROM ds._dlt_ops_runs"
                           ).fetchall()  # fmt: skip
        chunks = dict(con.execute("SELECT chunk_id, status FROM ds._dlt_backfills").fetchall())
        ids = con.execute("SELECT id FROM ds.events ORDER BY id").fetchall()
    assert [(t, s) for t, s, _ in runs] == [("dagster", "completed")]
    assert runs[0][2].date().isoformat() == "2026-01-03"
    assert chunks == {"000000": "pending", "000001": "running", "000002": "completed",
                      "000003": "pending"}  # fmt: skip
    assert ids == [(3,)]


#: A run over a range of two partitions (what a single-run backfill would launch).
RANGE = """
import json, sys
from dlt_ops.dagster import build_definitions

job = build_definitions(sys.argv[1]).resolve_job_def("events_src_backfill")
result = job.execute_in_process(raise_on_error=False, tags={
    "dagster/asset_partition_range_start": "2026-01-01",
    "dagster/asset_partition_range_end": "2026-01-02"})
failures = [e.step_failure_data.user_failure_data for e in result.get_step_failure_events()]
print(json.dumps({"success": result.success,
                  "failure": failures[0].description if failures and failures[0] else None}))
"""


@pytest.mark.integration
def test_a_range_run_is_refused_before_loading(dagster_env: Any, tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", CONFIG, {"events_src": EVENTS_SOURCE})
    proc = dagster_env.run(RANGE, str(root))
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    ran = _json_lines(proc.stdout)[0]
    assert ran["success"] is False
    assert "covers 2 partitions; each chunk is its own run" in ran["failure"], ran
    assert not (root / "events_src_pipeline.duckdb").exists()  # nothing claimed or loaded
