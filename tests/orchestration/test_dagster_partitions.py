"""Dagster partitions are backfill chunks (issue 31): 12 daily partitions on PostgreSQL,
executed as 12 runs at once (a process each, as a multi-run backfill launches them), land each
day exactly once and Dagster reports each partition materialized; a re-run partition loads
nothing; ``pipeline backfill`` of the same window finds every chunk completed."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.backfill.conftest import DAILY, build_project

DAYS = 12
FROM, TO = "2026-01-01T00:00:00Z", "2026-01-13T00:00:00Z"
KEYS = [f"2026-01-{d:02d}" for d in range(1, DAYS + 1)]

#: Each chunk run marks its day, then waits (up to 180 s: a loaded CI machine may take a minute
#: to start the other run's process) until a second chunk run has started
#: somewhere: the runs overlap whenever they really run in parallel, and a serial execution
#: still finishes (the overlap assertion then fails).
#: With ``BF_POOL`` it also stops waiting once a step of another run waits for a slot of that
#: Dagster pool (the pool held it back), and notes so in ``BF_POOL_SEEN``. "Waits" is a step queued
#: on the pool without a claimed slot, not ``pending_step_count``: two steps blocking at the same
#: instant may both be marked assigned (assigned 2, claimed 1) and the count then reads 0.
BARRIER = """    lo, hi = ts.start_value, ts.end_value
    once = os.environ.get("BF_FAIL_ONCE")
    if once and not os.path.exists(once):
        open(once, "w").close()
        raise RuntimeError("injected failure, this attempt only")
    marks = os.environ.get("BF_BARRIER_DIR")
    if marks:
        open(os.path.join(marks, lo.date().isoformat()), "w").close()
        pool = os.environ.get("BF_POOL")
        if pool:
            import dagster
            storage = dagster.DagsterInstance.get().event_log_storage
        deadline = time.monotonic() + 180
        while len(os.listdir(marks)) < 2 and time.monotonic() < deadline:
            if pool:
                info = storage.get_concurrency_info(pool)
                holders = {(c.run_id, c.step_key) for c in info.claimed_slots}
                if any((s.run_id, s.step_key) not in holders for s in info.pending_steps):
                    open(os.environ["BF_POOL_SEEN"], "w").close()
                    break
            time.sleep(0.05)
"""

#: Execute the given partitions of ``daily_backfill`` one after another, each a run of the
#: ``DAGSTER_HOME`` instance; one JSON line each.
PARTITIONS = """
import json, sys
import dagster as dg
from dlt_ops.dagster import build_definitions

job = build_definitions(sys.argv[1]).resolve_job_def("daily_backfill")
instance = dg.DagsterInstance.get()
for key in sys.argv[2].split(","):
    result = job.execute_in_process(partition_key=key, raise_on_error=False, instance=instance)
    meta = [{k: getattr(v, "value", getattr(v, "text", None)) for k, v in
             e.materialization.metadata.items()} for e in result.get_asset_materialization_events()]
    failures = [e.step_failure_data.user_failure_data for e in result.get_step_failure_events()]
    print(json.dumps({"key": key, "success": result.success, "run_id": result.run_id,
                      "meta": meta, "failure": failures[0].description if failures else None},
                     default=str), flush=True)
"""


#: What the instance says of the backfill asset: its backfill policy and which partitions of it
#: are materialized (Dagster's per-partition status, as its UI shows it).
STATUS = """
import json, sys
import dagster as dg
from dlt_ops.dagster import build_definitions

defs = build_definitions(sys.argv[1])
key = dg.AssetKey(["daily_backfill", "events"])
policy = defs.resolve_assets_def(key).backfill_policy
done = dg.DagsterInstance.get().get_materialized_partitions(key)
print(json.dumps({"policy": [str(policy.policy_type), policy.max_partitions_per_run],
                  "materialized": sorted(done)}))
"""


def _project(tmp_path: Path, pg: Any, engine: str = "postgres") -> Any:
    project = build_project(tmp_path / "proj", engine, pg)
    config = project.root / ".dlt" / "config.toml"
    text = config.read_text()
    keys = f'backfill_start = "{FROM}"\nbackfill_end = "{TO}"\nbackfill_chunk = "1d"\n'
    section = '[sources.daily.dlt_ops]\nschedule = "@daily"\n'
    config.write_text(text.replace(section, section + keys, 1))
    source = project.root / "pipe" / "source" / "daily.py"
    source.write_text(DAILY.replace("    lo, hi = ts.start_value, ts.end_value\n", BARRIER, 1))
    return project


def _lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def _overlapping(spans: list[tuple[datetime, datetime]]) -> int:
    """How many pairs of ``[start, end]`` spans overlap in time."""
    return sum(1 for i, (a0, a1) in enumerate(spans) for b0, b1 in spans[i + 1 :]
               if a0 < b1 and b0 < a1)  # fmt: skip


@pytest.mark.integration
def test_concurrent_partitions_land_each_day_once(dagster_env: Any, tmp_path: Path,
                                                   postgres_database: Any) -> None:  # fmt: skip
    project = _project(tmp_path, postgres_database)
    dagster = dagster_env.with_home(tmp_path / "dagster-home")
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    env = {"BF_DAYS": str(DAYS), "BF_BARRIER_DIR": str(barrier)}
    # one run per partition, all at once, as a multi-run backfill (one partition a run) does
    procs = [dagster.popen(PARTITIONS, str(project.root), key, env=env) for key in KEYS]
    outs = [p.communicate(timeout=900) for p in procs]
    for proc, (out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, (out + err)[-5000:]
    results = [line for out, _ in outs for line in _lines(out)]
    assert sorted(r["key"] for r in results) == KEYS
    assert all(r["success"] for r in results), [r for r in results if not r["success"]]
    # each day exactly once; every chunk completed in _dlt_backfills, one completed row each
    assert project.query("SELECT count(*), count(DISTINCT id) FROM {ds}.events") == [(12, 12)]
    chunks = project.query("SELECT status, count(*) FROM {ds}._dlt_backfills GROUP BY status")
    assert chunks == [("completed", DAYS)]
    runs = project.query(
        "SELECT run_id, trigger_source, status, started_at, completed_at, backfill_id, "
        "orchestrator_run_id, orchestrator_try FROM {ds}._dlt_ops_runs"
    )
    assert len(runs) == DAYS and len({r[0] for r in runs}) == DAYS
    assert {(r[1], r[2]) for r in runs} == {("dagster", "completed")}
    # each chunk row names the Dagster run that ran it and that step's try (issue 31)
    assert sorted((r[6], r[7]) for r in runs) == sorted((r["run_id"], 1) for r in results)
    # the partition runs ran in parallel: their start/end spans overlap
    overlaps = _overlapping([(r[3], r[4]) for r in runs])
    assert overlaps >= 1, sorted((r[3], r[4]) for r in runs)
    # each materialization names the chunk's dlt-ops run and the Dagster run
    by_key = {r["key"]: r for r in results}
    meta = by_key["2026-01-04"]["meta"][0]
    assert meta["dlt_ops/chunk_from"] == "2026-01-04T00:00:00+00:00"
    assert meta["dlt_ops/dagster_run_id"] == by_key["2026-01-04"]["run_id"]
    assert meta["dlt_ops/run_id"] in {r[0] for r in runs}
    assert (meta["dlt_ops/rows_loaded"], meta["dlt_ops/status"]) == (1, "completed")
    # Dagster's own per-partition status: the partitioned asset's 12 partitions materialized,
    # and its backfill policy launches one run per partition
    status = dagster.run(STATUS, str(project.root))
    assert status.returncode == 0, (status.stdout + status.stderr)[-5000:]
    seen = _lines(status.stdout)[0]
    assert seen == {"policy": ["BackfillPolicyType.MULTI_RUN", 1], "materialized": KEYS}

    # re-running a partition resumes: the chunk is completed, nothing is reloaded
    again = dagster.run(PARTITIONS, str(project.root), "2026-01-04", env=env)
    assert again.returncode == 0, (again.stdout + again.stderr)[-5000:]
    rerun = _lines(again.stdout)[0]
    assert rerun["success"] is True
    assert rerun["meta"][0]["dlt_ops/status"] == "already completed"
    assert rerun["meta"][0]["dlt_ops/records_loaded"] == 0
    assert project.query("SELECT count(*) FROM {ds}._dlt_ops_runs") == [(DAYS,)]

    # the CLI backfill of the same window shares the plan's ids: a no-op
    proc = project.cli("pipeline", "backfill", "daily", "--from", FROM, "--to", TO,
                       "--chunk", "1d", "-y", env={"BF_DAYS": str(DAYS)})  # fmt: skip
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert f"0 completed, {DAYS} skipped, 0 failed" in proc.stdout
    assert project.query("SELECT count(*) FROM {ds}._dlt_ops_runs") == [(DAYS,)]
    assert project.query("SELECT count(*), count(DISTINCT id) FROM {ds}.events") == [(12, 12)]


@pytest.mark.integration
def test_a_failed_partition_fails_its_step_and_a_retry_resumes(dagster_env: Any,
                                                               tmp_path: Path) -> None:  # fmt: skip
    project = _project(tmp_path, None, engine="duckdb")
    env = {"BF_DAYS": str(DAYS)}
    failed = dagster_env.run(PARTITIONS, str(project.root), "2026-01-02",
                             env={**env, "BF_FAIL_DAYS": "2026-01-02"})  # fmt: skip
    assert failed.returncode == 0, (failed.stdout + failed.stderr)[-5000:]
    first = _lines(failed.stdout)[0]
    assert first["success"] is False
    # the step failure is the run's error summary, as the ledger row has it
    assert "injected failure for the chunk starting 2026-01-02" in first["failure"], first
    assert project.query("SELECT status FROM {ds}._dlt_backfills WHERE chunk_id = '000001'") == [
        ("failed",)
    ]
    retried = dagster_env.run(PARTITIONS, str(project.root), "2026-01-02", env=env)
    assert retried.returncode == 0, (retried.stdout + retried.stderr)[-5000:]
    second = _lines(retried.stdout)[0]
    assert second["success"] is True and second["meta"][0]["dlt_ops/rows_loaded"] == 1
    rows = project.query("SELECT run_id, trigger_source, status, orchestrator_run_id "
                         "FROM {ds}._dlt_ops_runs ORDER BY started_at")  # fmt: skip
    assert [(t, s) for _, t, s, _ in rows] == [("dagster", "failed"), ("dagster", "completed")]
    # one chunk identity, two Dagster runs: each attempt's row names its own run
    assert [r[3] for r in rows] == [first["run_id"], second["run_id"]]
    assert rows[0][0] == rows[1][0] == second["meta"][0]["dlt_ops/run_id"]  # one chunk identity
    assert project.query("SELECT status, attempts FROM {ds}._dlt_backfills "
                         "WHERE chunk_id = '000001'") == [("completed", 2)]  # fmt: skip
    assert project.query("SELECT count(*), min(day) FROM {ds}.events") == [(1, "2026-01-02")]


#: One partition of the backfill asset in a job whose steps are retried once (a Dagster
#: ``RetryPolicy``): the step's second attempt runs in the same Dagster run.
RETRIED = """
import json, sys
import dagster as dg
from dlt_ops.dagster import build_definitions

defs = build_definitions(sys.argv[1])
chunks = defs.resolve_assets_def(dg.AssetKey(["daily_backfill", "events"]))
job = dg.define_asset_job("retried", selection=[chunks], partitions_def=chunks.partitions_def,
                          op_retry_policy=dg.RetryPolicy(max_retries=1))
job = dg.Definitions(assets=[chunks], jobs=[job]).resolve_job_def("retried")
result = job.execute_in_process(partition_key=sys.argv[2], raise_on_error=False)
print(json.dumps({"success": result.success, "run_id": result.run_id}))
"""


@pytest.mark.integration
def test_a_retried_step_names_its_try(dagster_env: Any, tmp_path: Path) -> None:
    project = _project(tmp_path, None, engine="duckdb")
    env = {"BF_DAYS": str(DAYS), "BF_FAIL_ONCE": str(tmp_path / "failed-once")}
    proc = dagster_env.run(RETRIED, str(project.root), "2026-01-03", env=env)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    done = _lines(proc.stdout)[0]
    assert done["success"] is True, (proc.stdout + proc.stderr)[-5000:]
    # one Dagster run, two step attempts: each attempt's row says which (orchestrator_try)
    rows = project.query("SELECT status, orchestrator_run_id, orchestrator_try "
                         "FROM {ds}._dlt_ops_runs ORDER BY started_at")  # fmt: skip
    assert rows == [("failed", done["run_id"], 1), ("completed", done["run_id"], 2)]
    assert project.query("SELECT count(*), min(day) FROM {ds}.events") == [(1, "2026-01-03")]


#: Dagster's instance config: every pool holds one step at a time.
POOL_LIMIT_ONE = "concurrency:\n  pools:\n    default_limit: 1\n"


@pytest.mark.integration
def test_the_single_writer_pool_keeps_partition_runs_apart(dagster_env: Any,
                                                           tmp_path: Path) -> None:  # fmt: skip
    """DuckDB is single-writer: the backfill's steps carry the pool ``dlt_ops/duckdb/<dataset>``,
    and with a limit of 1 in the instance two partition runs launched together never overlap
    (without the pool the barrier holds both runs until they do)."""
    project = _project(tmp_path, None, engine="duckdb")
    dagster = dagster_env.with_home(tmp_path / "dagster-home", POOL_LIMIT_ONE)
    barrier, seen = tmp_path / "barrier", tmp_path / "pool-waited"
    barrier.mkdir()
    env = {"BF_DAYS": str(DAYS), "BF_BARRIER_DIR": str(barrier),
           "BF_POOL": "dlt_ops/duckdb/bf_data", "BF_POOL_SEEN": str(seen)}  # fmt: skip
    procs = [dagster.popen(PARTITIONS, str(project.root), key, env=env) for key in KEYS[:2]]
    outs = [p.communicate(timeout=900) for p in procs]
    for proc, (out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, (out + err)[-5000:]
    results = [line for out, _ in outs for line in _lines(out)]
    assert [r["success"] for r in results] == [True, True], [r["failure"] for r in results]
    runs = project.query("SELECT started_at, completed_at FROM {ds}._dlt_ops_runs")
    assert len(runs) == 2
    assert _overlapping([(r[0], r[1]) for r in runs]) == 0, sorted(runs)
    # the first run's step held the pool's one slot while the other run's step waited for it
    assert seen.exists()
    assert project.query("SELECT count(*), count(DISTINCT id) FROM {ds}.events") == [(2, 2)]
