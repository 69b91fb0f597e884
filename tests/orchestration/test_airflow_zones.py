"""``build_schedule_dags`` carries a schedule's time zone into Airflow (issue 32), parsed in
Airflow's own venv: one DAG per schedule and zone, a cron timetable in that zone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EVENTS_SOURCE, write_project

CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"

[sources.berlin_src.dlt_ops]
schedule = "cron:30 2 * * * Europe/Berlin"

[sources.daily_berlin.dlt_ops]
schedule = "@daily"
timezone = "Europe/Berlin"

[sources.daily_utc.dlt_ops]
schedule = "@daily"
"""

PARSE = """
import json, os
from dlt_ops.airflow import build_schedule_dags

dags = build_schedule_dags(os.environ["DLT_PROJECT"])

if __name__ == "__main__":
    out = {}
    for dag_id, dag in sorted(dags.items()):
        table = dag.timetable
        out[dag_id] = {"timetable": type(table).__name__,
                       "expression": getattr(table, "expression", None),
                       "timezone": str(getattr(table, "timezone", None)),
                       "tasks": sorted(dag.task_ids)}
    print(json.dumps(out))
"""


@pytest.mark.integration
def test_zoned_schedules_become_zoned_timetables(airflow_home: Any, tmp_path: Path) -> None:
    names = ("berlin_src", "daily_berlin", "daily_utc")
    root = write_project(tmp_path / "proj", CONFIG, {n: EVENTS_SOURCE for n in names})
    proc = airflow_home.run_dag_file(tmp_path / "dags", PARSE, env={"DLT_PROJECT": str(root)})
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    dags = json.loads(proc.stdout.strip().splitlines()[-1])
    assert sorted(dags) == ["dlt_cron_30_2_x_x_x_Europe_Berlin", "dlt_daily",
                            "dlt_daily_Europe_Berlin"]  # fmt: skip
    berlin = dags["dlt_cron_30_2_x_x_x_Europe_Berlin"]
    assert berlin["timetable"] == "CronTriggerTimetable"
    assert (berlin["expression"], berlin["timezone"]) == ("30 2 * * *", "Europe/Berlin")
    assert berlin["tasks"] == ["berlin_src_events"]
    daily = dags["dlt_daily_Europe_Berlin"]
    assert (daily["expression"], daily["timezone"]) == ("0 0 * * *", "Europe/Berlin")
    assert dags["dlt_daily"]["tasks"] == ["daily_utc_events"]
    assert dags["dlt_daily"]["timezone"] in ("UTC", "Etc/UTC")  # a UTC schedule stays a cron string
