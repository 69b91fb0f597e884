"""The DAG factories as an Airflow user tunes them (issue 38), parsed in Airflow's own venv:
``dag_kwargs``/``default_args`` over the factory defaults, ``retries``/``retry_delay``, a
``sources=`` selector and per-source pools (a mapping or a prefix) with their check task."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EVENTS_SOURCE, write_project

CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"

[sources.feed.dlt_ops]
schedule = "@hourly"

[sources.orders.dlt_ops]
schedule = "@hourly"

[sources.later.dlt_ops]
schedule = "@manual"
"""

PARSE = """
import json, os
from datetime import datetime, timedelta, timezone
from dlt_ops.airflow import SCHEDULE_POOL_PREFIX, build_backfill_dag, build_schedule_dags

root = os.environ["DLT_PROJECT"]


def task_facts(dag, task_id):
    t = dag.get_task(task_id)
    return {"retries": t.retries, "retry_delay": t.retry_delay.total_seconds(), "pool": t.pool,
            "owner": t.owner, "upstream": sorted(t.upstream_task_ids)}


def error(call):
    try:
        call()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


out = {}
tuned = build_schedule_dags(
    root, dag_kwargs={"max_active_runs": 2, "tags": ["mine"], "catchup": True,
                      "default_args": {"owner": "etl"}},
    default_args={"retries": 4}, retries=1, retry_delay=timedelta(seconds=7),
)["dlt_hourly"]
out["tuned"] = {"max_active_runs": tuned.max_active_runs, "tags": sorted(tuned.tags),
                "catchup": tuned.catchup, "tasks": sorted(tuned.task_ids),
                "feed": task_facts(tuned, "feed_events")}
plain = build_schedule_dags(root, retry_delay=timedelta(seconds=9))["dlt_hourly"]
out["plain"] = {"max_active_runs": plain.max_active_runs, "feed": task_facts(plain, "feed_events")}
mapped = build_schedule_dags(root, dag_prefix="sel", sources=["feed", "later"],
                             pools={"feed": "feed_pool"})
out["mapped"] = {k: sorted(d.task_ids) for k, d in mapped.items()}
out["mapped_feed"] = task_facts(mapped["sel_hourly"], "feed_events")
prefixed = build_schedule_dags(root, dag_prefix="pre", pools=SCHEDULE_POOL_PREFIX)["pre_hourly"]
out["prefixed"] = {t: task_facts(prefixed, t)["pool"] for t in ("feed_events", "orders_events")}
out["check"] = task_facts(prefixed, "dlt_ops_pools_check")
unchecked = build_schedule_dags(root, dag_prefix="nc", pools="p_", check_pools_exist=False)
out["unchecked"] = sorted(unchecked["nc_hourly"].task_ids)
swept = build_schedule_dags(root, dag_prefix="cl", cleanup_data_dir=os.environ["SCRATCH"],
                            cleanup_after_days=2)["cl_hourly"]
sweep = swept.get_task("cleanup_old_dlt_files")
out["cleanup"] = {"upstream": sorted(sweep.upstream_task_ids),
                  "rule": str(sweep.trigger_rule.value), "args": list(sweep.op_args),
                  "in_plain": "cleanup_old_dlt_files" in plain.task_ids}
from dlt_ops.airflow.tasks import cleanup_old_dlt_files

cleanup_old_dlt_files.function(os.environ["SCRATCH"], 2)  # what the task runs
out["scratch_left"] = sorted(os.listdir(os.environ["SCRATCH"]))
out["unknown_source"] = error(lambda: build_schedule_dags(root, sources=["nope"]))
out["unknown_pool_source"] = error(lambda: build_schedule_dags(root, pools={"nope": "x"}))
out["dag_id"] = error(lambda: build_schedule_dags(root, dag_kwargs={"dag_id": "x"}))
bf = build_backfill_dag(root, "feed", from_="2026-01-01T00:00:00Z", to="2026-01-03T00:00:00Z",
                        chunk="1d", retries=3, retry_delay=timedelta(seconds=5),
                        dag_kwargs={"max_active_runs": 2, "tags": ["bf"]},
                        pools={"feed": "bf_pool", "orders": "orders_pool"})
out["backfill"] = {"max_active_runs": bf.max_active_runs, "tags": sorted(bf.tags),
                   "chunk": task_facts(bf, "run_chunk"), "check": task_facts(bf, "check")}
window = {"from_": "2026-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z", "chunk": "1d"}
out["backfill_unknown"] = error(lambda: build_backfill_dag(root, "nope", **window))
out["backfill_pool_typo"] = error(lambda: build_backfill_dag(root, "feed", **window,
                                                             pools={"fed": "x"}))

# a task's own parse of the DAG file (what Airflow's task runner does first) scans nothing
import dlt_ops.project.discovery as discovery
from airflow.sdk.definitions._internal.dag_parsing_context import (
    _airflow_parsing_context_manager,
)

scans = []
_discover = discovery.discover
discovery.discover = lambda path: scans.append(path) or _discover(path)
pooled = {**window, "dag_id": "bf_ctx", "pools": {"feed": "bf_pool", "orders": "orders_pool"}}


def facts(dag):
    return {t: task_facts(dag, t) for t in sorted(dag.task_ids)}


parsed = facts(build_backfill_dag(root, "feed", **pooled))
with _airflow_parsing_context_manager(dag_id="bf_ctx", task_id="run_chunk"):
    in_task = facts(build_backfill_dag(root, "feed", **pooled))
out["task_parse"] = {"scans": len(scans), "same": parsed == in_task, "parsed": parsed}
discovery.discover = _discover
print(json.dumps(out))
"""


def _json(proc: Any) -> dict[str, Any]:
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.integration
def test_factory_options_reach_airflow(airflow_home: Any, tmp_path: Path) -> None:
    sources = {name: EVENTS_SOURCE for name in ("feed", "orders", "later")}
    root = write_project(tmp_path / "proj", CONFIG, sources)
    scratch = tmp_path / "scratch"  # 0.1's cleanup task: dlt_* entries older than 2 days go
    for name in ("dlt_old_dir", "dlt_new_dir", "keep_old"):
        (scratch / name).mkdir(parents=True)
    (scratch / "dlt_old_file").write_text("x")
    long_ago = time.time() - 3 * 86400
    for name in ("dlt_old_dir", "dlt_old_file", "keep_old"):
        os.utime(scratch / name, (long_ago, long_ago))
    env = {"DLT_PROJECT": str(root), "SCRATCH": str(scratch)}
    out = _json(airflow_home.run_dag_file(tmp_path / "dags", PARSE, env=env))
    cleanup = out["cleanup"]  # appended after every source's last task, as in 0.1
    assert cleanup == {"upstream": ["feed_events", "orders_events"], "rule": "none_failed",
                       "args": [str(scratch), 2], "in_plain": False}  # fmt: skip
    assert out["scratch_left"] == ["dlt_new_dir", "keep_old"]
    tuned = out["tuned"]  # dag_kwargs over the factory's max_active_runs=1, tags, catchup
    assert (tuned["max_active_runs"], tuned["tags"], tuned["catchup"]) == (2, ["mine"], True)
    # default_args wins over retries=; retry_delay= and dag_kwargs' default_args still apply
    assert tuned["feed"] | {"upstream": None} == {"retries": 4, "retry_delay": 7.0,
        "pool": "default_pool", "owner": "etl", "upstream": None}  # fmt: skip
    assert tuned["tasks"] == ["feed_events", "orders_events"]  # no pool check without pools
    assert out["plain"]["max_active_runs"] == 1
    assert (out["plain"]["feed"]["retries"], out["plain"]["feed"]["retry_delay"]) == (0, 9.0)
    assert out["mapped"] == {"sel_hourly": ["dlt_ops_pools_check", "feed_events"],
                             "sel_manual": ["later_events"]}  # fmt: skip
    assert out["mapped_feed"]["pool"] == "feed_pool"
    assert out["mapped_feed"]["upstream"] == ["dlt_ops_pools_check"]
    assert out["prefixed"] == {"feed_events": "dlt_ops_feed", "orders_events": "dlt_ops_orders"}
    assert (out["check"]["pool"], out["check"]["retries"]) == ("default_pool", 0)
    assert out["unchecked"] == ["feed_events", "orders_events"]
    assert out["unknown_source"].startswith("UnknownSourceError: unknown source 'nope'")
    assert out["unknown_pool_source"].startswith("UnknownSourceError: unknown source 'nope'")
    assert out["dag_id"].startswith("UsageError: dag_kwargs cannot set dag_id")
    backfill = out["backfill"]
    assert (backfill["max_active_runs"], backfill["tags"]) == (2, ["bf"])
    chunk = backfill["chunk"]
    assert (chunk["retries"], chunk["retry_delay"], chunk["pool"]) == (3, 5.0, "bf_pool")
    assert backfill["check"]["retries"] == 0  # a retry cannot change the coverage
    # the source is checked at parse time; a project-wide pools mapping is fine, a typo is not
    assert out["backfill_unknown"].startswith("UnknownSourceError: unknown source 'nope'")
    assert out["backfill_pool_typo"].startswith("UnknownSourceError: unknown source 'fed'")
    # the dag-processor's parse scans the project once; a task's parse builds the same DAG
    # (tasks, pools, retries) without scanning it again (issue 38)
    task_parse = out["task_parse"]
    assert (task_parse["scans"], task_parse["same"]) == (1, True)
    assert task_parse["parsed"]["run_chunk"]["pool"] == "bf_pool"


CONN_CONFIG = """
[dlt_ops]
default_destination = "postgres"
default_dataset = "ds"

[sources.feed.dlt_ops]
schedule = "@hourly"
airflow_conn = "dwh"
"""

#: Records, while it extracts, the config providers dlt consults in this task.
PROVIDER_PROBE = """
import json, os

import dlt


@dlt.resource(name="events", primary_key="id", write_disposition="merge")
def events():
    from dlt.common.configuration.container import Container
    from dlt.common.configuration.specs.pluggable_run_context import PluggableRunContext

    names = [p.name for p in Container()[PluggableRunContext].providers.providers]
    with open(os.environ["PROVIDERS_LOG"], "a") as log:
        log.write(json.dumps(names) + "\\n")
    yield [{"id": i} for i in range(1, 4)]


@dlt.source(name="{name}")
def {name}_source():
    return events
"""

#: Counts the Airflow Variable look-ups dlt makes (its provider calls airflow.models.Variable).
PROVIDER_DAGS = """
import json, os
from airflow.models.variable import Variable

CALLS = []
if not getattr(Variable, "_dltops_counted", False):
    _get = Variable.get.__func__

    def _counted(cls, key, *args, **kwargs):
        CALLS.append(key)
        return _get(cls, key, *args, **kwargs)

    Variable.get = classmethod(_counted)
    Variable._dltops_counted = True

from dlt_ops.airflow import build_schedule_dags

root = os.environ["DLT_PROJECT"]
dags = {**build_schedule_dags(root, dag_prefix="kept", dlt_airflow_secrets=True),
        **build_schedule_dags(root)}
globals().update(dags)

if __name__ == "__main__":
    from airflow.models.connection import Connection
    from airflow.utils.session import create_session

    with create_session() as session:  # in the metadata DB, as `airflow connections add` does
        session.add(Connection(conn_id="dwh", conn_type="postgres", host=os.environ["PG_HOST"],
                               port=int(os.environ["PG_PORT"]), login=os.environ["PG_USER"],
                               password=os.environ["PG_PASSWORD"], schema=os.environ["PG_DB"]))
    for dag_id in ("kept_hourly", "dlt_hourly"):
        before = len(CALLS)
        run = dags[dag_id].test()
        print(json.dumps({"dag": dag_id, "state": str(run.state),
                          "variable_calls": len(CALLS) - before}))
"""


@pytest.mark.integration
def test_tasks_run_without_dlts_airflow_provider_and_credentials_from_a_connection(
    airflow_home: Any, tmp_path: Path, postgres_database: Any
) -> None:
    import psycopg

    root = write_project(tmp_path / "proj", CONN_CONFIG, {"feed": PROVIDER_PROBE})
    log = tmp_path / "providers.jsonl"
    db = postgres_database
    password = db.password or "p@ss w/rd"  # quoted into the URI and back
    env = {"DLT_PROJECT": str(root), "PROVIDERS_LOG": str(log), "PG_HOST": db.host,
           "PG_PORT": str(db.port), "PG_USER": db.user, "PG_PASSWORD": password,
           "PG_DB": db.dbname}  # fmt: skip
    proc = airflow_home.run_dag_file(tmp_path / "dags", PROVIDER_DAGS, env=env)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    runs = [json.loads(ln) for ln in proc.stdout.splitlines() if ln.startswith('{"dag"')]
    assert [(r["dag"], r["state"]) for r in runs] == [("kept_hourly", "success"),
        ("dlt_hourly", "success")], (proc.stdout + proc.stderr)[-5000:]  # fmt: skip
    kept, default = (json.loads(ln) for ln in log.read_text().splitlines())
    assert "Airflow Secrets TOML Provider" in kept  # dlt_airflow_secrets=True keeps dlt's
    assert "Airflow Secrets TOML Provider" not in default  # off by default
    assert runs[0]["variable_calls"] > 0 and runs[1]["variable_calls"] == 0
    # the destination's credentials came from the Connection only (no secrets.toml, no env)
    assert not (root / ".dlt" / "secrets.toml").exists()
    with psycopg.connect(db.url) as con:
        assert con.execute("SELECT count(*) FROM ds.events").fetchone() == (3,)
        rows = con.execute("SELECT trigger_source, status FROM ds._dlt_ops_runs").fetchall()
    assert rows == [("airflow", "completed")] * 2
    assert password not in proc.stdout + proc.stderr


POOLED = """
import json, os
from dlt_ops.airflow import build_schedule_dags

dags = build_schedule_dags(os.environ["DLT_PROJECT"], dag_prefix="pooled", sources=["feed"],
                           pools={"feed": "feed_pool"})
globals().update(dags)

if __name__ == "__main__":
    from airflow.models.pool import Pool

    run = dags["pooled_hourly"].test()
    tasks = {ti.task_id: str(ti.state) for ti in run.get_task_instances()}
    pool = Pool.get_pool("feed_pool")  # in the metadata DB
    print(json.dumps({"state": str(run.state), "tasks": tasks,
                      "slots": pool.slots if pool else None}))
"""


@pytest.mark.integration
def test_a_missing_pool_fails_the_run_until_dlt_ops_creates_it(
    airflow_home: Any, tmp_path: Path
) -> None:
    import subprocess

    sources = {name: EVENTS_SOURCE for name in ("feed", "orders", "later")}
    root = write_project(tmp_path / "proj", CONFIG, sources)
    env = {"DLT_PROJECT": str(root)}
    proc = airflow_home.run_dag_file(tmp_path / "dags", POOLED, env=env)
    before = _json(proc)
    assert (before["state"], before["slots"]) == ("failed", None)  # not 'scheduled' forever
    assert "Airflow pool(s) ['feed_pool'] used by this DAG's tasks were not created" in (
        proc.stdout + proc.stderr
    )
    assert before["tasks"] == {"dlt_ops_pools_check": "failed", "feed_events": "upstream_failed"}
    cli = [str(airflow_home.venv / "bin" / "dlt-ops"), "--root", str(root), "airflow", "pools",
           "--source", "feed", "--map", "feed=feed_pool", "--apply", "--json"]  # fmt: skip
    made = subprocess.run(cli, env=airflow_home.env(), capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr[-3000:]
    assert json.loads(made.stdout) == [{"source": "feed", "pool": "feed_pool", "slots": 1,
                                        "created": True, "applied": True}]  # fmt: skip
    after = _json(airflow_home.run_dag_file(tmp_path / "dags", POOLED, env=env))
    assert after == {
        "state": "success",
        "tasks": {"dlt_ops_pools_check": "success", "feed_events": "success"},
        "slots": 1,
    }


def test_airflow_pools_without_airflow_names_the_extra(tmp_path: Path) -> None:
    import subprocess
    import sys

    root = write_project(tmp_path / "proj", CONFIG, {"feed": EVENTS_SOURCE})
    cli = Path(sys.executable).parent / "dlt-ops"  # this venv has no Airflow
    done = subprocess.run([str(cli), "--root", str(root), "airflow", "pools", "--apply"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert 'pip install "dltops-core[airflow]"' in done.stderr


#: Builds one schedule's DAG for 5 and for 40 sources; a task's arguments (what Airflow walks
#: for XCom references and serializes per task) and a DAG run naming an unknown source.
FLEET = """
import json, os
from dlt_ops.airflow import build_schedule_dags

root = os.environ["DLT_PROJECT"]
small = build_schedule_dags(root, dag_prefix="small",
                            sources=[f"s{i:02d}" for i in range(5)])["small_hourly"]
large = build_schedule_dags(root)["dlt_hourly"]
globals().update({"small": small, "large": large})


def args(dag):
    t = dag.get_task("s00_events")
    return repr((t.op_args, t.op_kwargs))


if __name__ == "__main__":
    run = small.test(run_conf={"source": "nope"})
    print(json.dumps({"tasks": [len(small.tasks), len(large.tasks)],
                      "args": [args(small), args(large)], "state": str(run.state),
                      "tis": sorted({str(ti.state) for ti in run.get_task_instances()})}))
"""


@pytest.mark.integration
def test_a_tasks_arguments_do_not_grow_with_the_sources_of_its_dag(
    airflow_home: Any, tmp_path: Path
) -> None:
    # each task carried the names of every source of its DAG: at 1,000 sources Airflow walked
    # a million names for XCom references while parsing, and serialized them 1,000 times
    config = '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "ds"\n' + "".join(
        f'[sources.s{i:02d}.dlt_ops]\nschedule = "@hourly"\n' for i in range(40)
    )
    root = write_project(tmp_path / "proj", config,
                         {f"s{i:02d}": EVENTS_SOURCE for i in range(40)})  # fmt: skip
    proc = airflow_home.run_dag_file(tmp_path / "dags", FLEET, env={"DLT_PROJECT": str(root)})
    out = _json(proc)
    assert out["tasks"] == [5, 40]
    small, large = out["args"]
    assert small == large, (small, large)
    # the run-time check still knows the DAG's sources: a run naming another one fails
    assert (out["state"], out["tis"]) == ("failed", ["failed"])
    assert "unknown source 'nope' in dag_run.conf; known: ['s00', 's01', 's02', 's03', 's04']" in (
        proc.stdout + proc.stderr
    )
