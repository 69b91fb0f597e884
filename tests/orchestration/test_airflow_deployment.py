"""Per-source pools on a real Airflow deployment (issue 38): ``airflow standalone`` (scheduler,
dag-processor, api-server, LocalExecutor) parses a DAG file with two schedule DAGs over one
source; ``dlt-ops airflow pools --apply`` creates its pool; the second DAG's task of that
source waits in the pool, ``scheduled``, while the first one's runs, and is queued only once
it ended. Everything is read from Airflow's own state: its REST API (pools) and metadata
database (task instances), and from the runs ledger.

The first run's task holds the source at a gate (a file the test creates) until the test has
seen the scheduler pass over the waiting task: the second DAG's task of another source,
scheduled with it, gets queued while it stays ``scheduled``. A factory that dropped the pool
would let the waiting task be queued and run beside the first (it would then wait for the
run lease inside a worker), and the test fails there."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import write_project

CONFIG = """
[dlt_ops]
default_destination = "postgres"
default_dataset = "ds"

[sources.feed.dlt_ops]
schedule = "@manual"

[sources.other.dlt_ops]
schedule = "@manual"
"""

#: Waits at ``{gate}/open`` (a file the test creates; at most 10 min) once it is extracting.
GATED = """
import os
import time
from pathlib import Path

import dlt

GATE = Path({gate!r})


@dlt.resource(name="events", primary_key="id", write_disposition="merge")
def events():
    (GATE / f"entered-{{os.getpid()}}").write_text("extracting")
    deadline = time.monotonic() + 600
    while not (GATE / "open").exists():  # a condition the test sets, not a timed sleep
        if time.monotonic() > deadline:
            raise RuntimeError("the test never opened the gate")
        time.sleep(0.05)
    yield [{{"id": i}} for i in range(1, 4)]


@dlt.source(name="{{name}}")
def {{name}}_source():
    return events
"""

PLAIN = """
import dlt


@dlt.resource(name="events", primary_key="id", write_disposition="merge")
def events():
    yield [{"id": i} for i in range(1, 4)]


@dlt.source(name="{name}")
def {name}_source():
    return events
"""

DAG_FILE = """
from dlt_ops.airflow import SCHEDULE_POOL_PREFIX, build_schedule_dags

ROOT = {root!r}
# two schedule DAGs over the source `feed`, each source in its own pool (dlt_ops_<source>)
globals().update(build_schedule_dags(ROOT, dag_prefix="first", sources=["feed"],
                                     pools=SCHEDULE_POOL_PREFIX))
globals().update(build_schedule_dags(ROOT, dag_prefix="second", sources=["feed", "other"],
                                     pools=SCHEDULE_POOL_PREFIX))
"""

FIRST, SECOND = "first_manual", "second_manual"
POOL = "dlt_ops_feed"
#: Task-instance states a task reaches once the scheduler handed it to the executor.
LEFT_THE_POOL = ("queued", "running", "success", "failed", "up_for_retry", "up_for_reschedule")


def _until(what: str, check: Callable[[], Any], deployment: Any, timeout: float = 300) -> Any:
    """Poll ``check`` (every 0.25 s) until it returns something truthy; fail after ``timeout``
    or as soon as the deployment exits."""
    deadline = time.monotonic() + timeout
    while not (found := check()):
        deployment.alive(what)
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s\n{deployment.log_tail()}")
        time.sleep(0.25)
    return found


def _ti(deployment: Any, dag_id: str, run_id: str, task_id: str) -> dict[str, Any] | None:
    found = [t for t in deployment.task_instances(dag_id, run_id) if t["task_id"] == task_id]
    return found[0] if found else None


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text)


@pytest.mark.slow
@pytest.mark.integration
def test_a_second_schedule_dag_waits_in_the_sources_pool(
    airflow_deployment: Any, tmp_path: Path, postgres_database: Any
) -> None:
    import psycopg

    deployment = airflow_deployment
    gate = tmp_path / "gate"
    gate.mkdir()
    root = write_project(tmp_path / "proj", CONFIG,
                         {"feed": GATED.format(gate=str(gate)), "other": PLAIN})  # fmt: skip
    (root / ".dlt" / "secrets.toml").write_text(
        f'[destination.postgres]\ncredentials = "{postgres_database.dlt_url}"\n'
    )
    (deployment.dags / "dlt_ops_pooled.py").write_text(DAG_FILE.format(root=str(root)))
    deployment.wait_parsed([FIRST, SECOND], timeout=300)

    def pools() -> dict[str, dict[str, Any]]:
        return {p["name"]: p for p in deployment.api("GET", "/api/v2/pools")["pools"]}

    assert POOL not in pools()  # a DAG file cannot create pools in Airflow 3 ...
    apply = [str(deployment.venv / "bin" / "dlt-ops"), "--root", str(root), "airflow", "pools",
             "--apply", "--json"]  # fmt: skip
    made = subprocess.run(apply, env=deployment.env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert made.returncode == 0, made.stderr[-3000:]
    assert {(p["pool"], p["created"]) for p in json.loads(made.stdout)} == {
        ("dlt_ops_feed", True), ("dlt_ops_other", True)}  # fmt: skip
    listed = pools()  # ... the documented step does, one slot each, as Airflow lists them
    assert (listed[POOL]["slots"], listed["dlt_ops_other"]["slots"]) == (1, 1)

    first = deployment.trigger(FIRST)
    _until("the first DAG's feed task extracting", lambda: list(gate.glob("entered-*"))
           and (_ti(deployment, FIRST, first, "feed_events") or {}).get("state") == "running",
           deployment)  # fmt: skip
    second = deployment.trigger(SECOND)

    def passed_over() -> dict[str, Any] | None:
        """The moment the scheduler queued the second DAG's `other` task while its `feed`
        task, scheduled with it, stayed in the full pool; fails if `feed` left the pool."""
        feed = _ti(deployment, SECOND, second, "feed_events") or {}
        other = _ti(deployment, SECOND, second, "other_events") or {}
        held = _ti(deployment, FIRST, first, "feed_events") or {}
        if feed.get("state") in LEFT_THE_POOL:
            raise AssertionError(f"the second DAG's feed task left the pool while the first "
                                 f"one's ran: {feed} (first: {held})")  # fmt: skip
        assert held.get("state") == "running", held
        if feed.get("state") == "scheduled" and other.get("state") in LEFT_THE_POOL:
            return {"first_feed": held["state"], "second_feed": feed["state"],
                    "second_other": other["state"], "pool": pools()[POOL]}  # fmt: skip
        return None

    seen = _until("the scheduler passing over the pooled task", passed_over, deployment)
    # Airflow's own view of the pool while it waits: one task running, one scheduled
    assert (seen["pool"]["running_slots"], seen["pool"]["scheduled_slots"],
            seen["pool"]["open_slots"]) == (1, 1, 0), seen  # fmt: skip
    assert len(list(gate.glob("entered-*"))) == 1  # only the first run's task is extracting
    (gate / "open").write_text("")
    assert deployment.wait_run(FIRST, first, timeout=300) == "success"
    assert deployment.wait_run(SECOND, second, timeout=300) == "success"

    a = _ti(deployment, FIRST, first, "feed_events")
    b = _ti(deployment, SECOND, second, "feed_events")
    other = _ti(deployment, SECOND, second, "other_events")
    assert a and b and other and (a["pool"], b["pool"]) == (POOL, POOL)
    # the second feed task was ready (scheduled) while the first ran, yet was queued only
    # after it ended, and the other source's task was queued in between: it waited in the pool
    assert _at(b["scheduled_dttm"]) <= _at(other["queued_dttm"]) < _at(a["end_date"])
    assert _at(a["end_date"]) <= _at(b["queued_dttm"]) <= _at(b["start_date"])
    with psycopg.connect(postgres_database.url) as con:
        rows = con.execute(
            "SELECT orchestrator_run_id, status, queued_at, started_at, completed_at "
            "FROM ds._dlt_ops_runs WHERE source_section = 'feed' ORDER BY started_at"
        ).fetchall()
    assert [(r[0], r[1]) for r in rows] == [(f"{FIRST}/{first}", "completed"),
                                            (f"{SECOND}/{second}", "completed")]  # fmt: skip
    # in the ledger too: the second run began asking for the lease after the first completed
    assert rows[0][4] <= rows[1][2] <= rows[1][3]
    print(json.dumps({"seen": seen, "first_feed": a, "second_feed": b, "second_other": other},
                     default=str))  # fmt: skip
