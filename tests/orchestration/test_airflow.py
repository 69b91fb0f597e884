"""``dlt_ops.airflow`` under real ``dag.test()`` runs, in Airflow's own venv (issue 13)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.backfill.conftest import DAILY, build_project
from tests.conftest import write_project

CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"

[sources.events_src.dlt_ops]
schedule = "@hourly"
airflow_var = "EVENTS_TOKEN"
airflow_var_key = "token"

[sources.manual_src.dlt_ops]
schedule = "@manual"
"""

#: Needs a secret (served by the Airflow Variable); never prints it.
SECRET_SOURCE = """
import dlt


@dlt.resource(name="events", primary_key="id", write_disposition="merge")
def events(token=dlt.secrets.value):
    if token != "s3cret-token":
        raise ValueError("wrong token")
    yield [{"id": i} for i in range(1, 6)]


@dlt.source(name="{name}")
def {name}_source(token=dlt.secrets.value):
    return events(token)
"""

#: Importing this module at DAG parse time would leave a marker (and fail).
BOOBY_TRAP = """
import os
from pathlib import Path

Path(os.environ["TRAP_MARKER"]).write_text("imported at parse time")
raise RuntimeError("this module must never be imported while a DAG file is parsed")

import dlt


@dlt.source(name="{name}")
def {name}_source():
    return []
"""

SCHEDULED = """
import json, os
from pathlib import Path
from dlt_ops.airflow import build_schedule_dags

dags = build_schedule_dags(os.environ["DLT_PROJECT"])
globals().update(dags)

if __name__ == "__main__":
    trap = Path(os.environ["TRAP_MARKER"])
    tasks = {k: sorted(d.task_ids) for k, d in dags.items()}
    print(json.dumps({"dags": sorted(dags), "tasks": tasks, "trap": trap.exists()}))
    run = dags["dlt_hourly"].test(variable_file_path=os.environ["VARIABLES"])
    print(json.dumps({"state": str(run.state)}))
"""


def _last_json(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def test_without_airflow_the_module_imports_and_a_dag_builder_names_the_extra() -> None:
    code = (
        "import sys, dlt_ops.airflow\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'airflow'))\n"
        "from dlt_ops.airflow import build_schedule_dags\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)  # fmt: skip
    assert proc.stdout.strip() == "[]"  # the import itself loads no Airflow module
    last = proc.stderr.strip().splitlines()[-1]
    assert (
        last
        == 'ImportError: dlt_ops.airflow needs Apache Airflow 3: pip install "dltops-core[airflow]"'
    )


@pytest.mark.integration
def test_scheduled_dag_lands_an_airflow_row(airflow_home: Any, tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", CONFIG,
                         {"events_src": SECRET_SOURCE, "manual_src": BOOBY_TRAP})  # fmt: skip
    variables = tmp_path / "variables.json"
    variables.write_text(json.dumps({"EVENTS_TOKEN": "s3cret-token"}))
    trap = tmp_path / "trap"
    env = {"TRAP_MARKER": str(trap), "DLT_PROJECT": str(root), "VARIABLES": str(variables)}
    proc = airflow_home.run_dag_file(tmp_path / "dags", SCHEDULED, env=env)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    parsed, ran = _last_json(proc.stdout)[:2]
    assert parsed["dags"] == ["dlt_hourly", "dlt_manual"]
    assert parsed["tasks"]["dlt_hourly"] == ["events_src_events"]
    assert parsed["trap"] is False and not trap.exists()
    assert ran["state"] == "success", (proc.stdout + proc.stderr)[-5000:]
    with duckdb.connect(str(root / "events_src_pipeline.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT trigger_source, status, run_id, orchestrator_run_id, "
                           "orchestrator_try FROM ds._dlt_ops_runs").fetchall()  # fmt: skip
        assert con.execute("SELECT count(*) FROM ds.events").fetchone() == (5,)
    assert [(t, s) for t, s, *_ in rows] == [("airflow", "completed")]
    assert rows[0][2].startswith("airflow:dlt_hourly:") and rows[0][2].endswith(
        ":events_src_events:1"
    )
    # the row names its DAG run and try (issue 31): <dag_id>/<run_id>, try 1
    dag_run = rows[0][2].removeprefix("airflow:").removesuffix(":events_src_events:1")
    assert rows[0][3:] == (dag_run.replace(":", "/", 1), 1)
    assert "s3cret-token" not in proc.stdout + proc.stderr


BACKFILL = """
import json, os
from datetime import datetime, timezone
from dlt_ops.airflow import build_backfill_dag

dag = build_backfill_dag(os.environ["DLT_PROJECT"], "daily",
                         from_=datetime(2026, 1, 1, tzinfo=timezone.utc),
                         to=datetime(2026, 1, 11, tzinfo=timezone.utc), chunk="1d")

if __name__ == "__main__":
    print(json.dumps({"tasks": sorted(dag.task_ids)}))
    runs = []
    for attempt in range(2):  # the second run finds every chunk completed: it reloads nothing
        runs.append(dag.test())
        print(json.dumps({"state": str(runs[-1].state)}))
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session
    from dlt_ops.airflow.dags import _chunk

    with create_session() as session:  # what each chunk task of the first run returned
        rows = session.scalars(XComModel.get_many(run_id=runs[0].run_id, dag_ids=dag.dag_id,
                                                  task_ids="run_chunk", key="return_value"))
        xcoms = [XComModel.deserialize_value(row) for row in rows]
    # a cleared chunk task of a completed chunk: the task's callable, as Airflow calls it
    again = _chunk(os.environ["DLT_PROJECT"], "daily", "2026-01-01T00:00:00+00:00",
                   "2026-01-11T00:00:00+00:00", "1d", None, "10m", 0)
    print(json.dumps({"xcoms": xcoms, "again": again,
                      "dag_run": f"{dag.dag_id}/{runs[0].run_id}"}))
"""


@pytest.mark.integration
def test_backfill_dag_covers_the_window_once(airflow_home: Any, tmp_path: Path,
                                             postgres_database: Any) -> None:  # fmt: skip
    project = build_project(tmp_path / "proj", "postgres", postgres_database)
    env = {"BF_DAYS": "10", "DLT_PROJECT": str(project.root)}
    proc = airflow_home.run_dag_file(tmp_path / "dags", BACKFILL, env=env)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    parsed, first, second, results = _last_json(proc.stdout)[:4]
    assert parsed["tasks"] == ["check", "run_chunk", "seed"]
    assert first["state"] == second["state"] == "success", (proc.stdout + proc.stderr)[-5000:]
    # each chunk's XCom says it ran, with the chunk's dlt-ops run id (issue 38)
    xcoms = sorted(results["xcoms"], key=lambda x: x["index"])
    assert [(x["outcome"], x["status"], x["index"]) for x in xcoms] == [
        ("ran", "completed", i) for i in range(10)
    ]
    ledger_ids = project.query("SELECT run_id FROM {ds}._dlt_ops_runs WHERE status = 'completed'")
    assert {x["run_id"] for x in xcoms} == {r for (r,) in ledger_ids}
    # every chunk row names the DAG run and the task's try that ran it (issue 31)
    ran_by = project.query("SELECT DISTINCT orchestrator_run_id, orchestrator_try "
                           "FROM {ds}._dlt_ops_runs")  # fmt: skip
    assert ran_by == [(results["dag_run"], 1)]
    assert all(x["records_loaded"] == 1 for x in xcoms)
    again = results["again"]  # a cleared task of a completed chunk skips it
    assert (again["outcome"], again["status"], again["records_loaded"]) == ("skipped",
        "completed", None)  # fmt: skip
    assert again["run_id"] == xcoms[0]["run_id"]
    assert project.query("SELECT count(*), count(DISTINCT id) FROM {ds}.events") == [(10, 10)]
    completed = project.query(
        "SELECT count(DISTINCT run_id), count(*) FROM {ds}._dlt_ops_runs "
        "WHERE trigger_source = 'backfill' AND status = 'completed'"
    )
    assert completed == [(10, 10)]
    statuses = project.query("SELECT DISTINCT status FROM {ds}._dlt_backfills")
    assert statuses == [("completed",)]


RETRIED_CHUNK = """
import json, os
from datetime import datetime, timedelta, timezone
from dlt_ops.airflow import build_backfill_dag

dag = build_backfill_dag(os.environ["DLT_PROJECT"], "daily",
                         from_=datetime(2026, 1, 1, tzinfo=timezone.utc),
                         to=datetime(2026, 1, 3, tzinfo=timezone.utc), chunk="1d",
                         retries=1, retry_delay=timedelta(0))

if __name__ == "__main__":
    run = dag.test()
    print(json.dumps({"state": str(run.state), "dag_run": f"{dag.dag_id}/{run.run_id}"}))
"""

#: The chunk of 2026-01-02 fails its first attempt only (a marker file remembers it).
FAIL_ONCE = """    lo, hi = ts.start_value, ts.end_value
    once = os.environ["BF_FAIL_ONCE"]
    if lo.date().isoformat() == "2026-01-02" and not os.path.exists(once):
        open(once, "w").close()
        raise RuntimeError("injected failure, this attempt only")
"""


@pytest.mark.integration
def test_a_retried_chunk_task_names_its_try(airflow_home: Any, tmp_path: Path) -> None:
    project = build_project(tmp_path / "proj", "duckdb")
    source = project.root / "pipe" / "source" / "daily.py"
    source.write_text(DAILY.replace("    lo, hi = ts.start_value, ts.end_value\n", FAIL_ONCE, 1))
    env = {"BF_DAYS": "2", "DLT_PROJECT": str(project.root),
           "BF_FAIL_ONCE": str(tmp_path / "failed-once")}  # fmt: skip
    proc = airflow_home.run_dag_file(tmp_path / "dags", RETRIED_CHUNK, env=env)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    ran = _last_json(proc.stdout)[0]
    assert ran["state"] == "success", (proc.stdout + proc.stderr)[-5000:]
    # the chunk rows name the DAG run and each task try: the retried chunk's two attempts
    rows = project.query("SELECT window_from, status, orchestrator_run_id, orchestrator_try "
                         "FROM {ds}._dlt_ops_runs ORDER BY window_from, started_at")  # fmt: skip
    assert [(w.date().isoformat(), s, r, t) for w, s, r, t in rows] == [
        ("2026-01-01", "completed", ran["dag_run"], 1),
        ("2026-01-02", "failed", ran["dag_run"], 1),
        ("2026-01-02", "completed", ran["dag_run"], 2),
    ]
    assert project.query("SELECT count(*), count(DISTINCT id) FROM {ds}.events") == [(2, 2)]
