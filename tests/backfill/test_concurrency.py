"""Exactly-once under concurrency: 4 backfill processes on one window, and ``--workers``."""

from __future__ import annotations

import re
from collections import Counter

from dlt_ops.backfill.plan import BackfillPlan

FROM, TO = "2026-01-01T00:00:00Z", "2026-01-11T00:00:00Z"  # 10 daily chunks
DAYS = [f"2026-01-{d:02d}" for d in range(1, 11)]
SLOW = {"BF_SLEEP_S": "0.3", "BF_ROWS_PER_DAY": "3", "BF_DAYS": "12"}
ARGS = ("pipeline", "backfill", "daily", "--from", FROM, "--to", TO, "--chunk", "1d")


def _exactly_once(project, plan: BackfillPlan) -> Counter[str]:
    """Every chunk: one completed ledger row, one completed state row, its rows loaded once."""
    ledger = Counter(
        run_id
        for run_id, status in project.query("SELECT run_id, status FROM {ds}._dlt_ops_runs")
        if status == "completed"
    )
    all_rows = Counter(r for (r,) in project.query("SELECT run_id FROM {ds}._dlt_ops_runs"))
    assert {c.run_id for c in plan.chunks} == set(ledger)
    assert all(ledger[c.run_id] == 1 for c in plan.chunks), ledger
    assert all(all_rows[c.run_id] == 1 for c in plan.chunks), all_rows  # no failed attempts
    states = project.query(
        "SELECT status, count(*) FROM {ds}._dlt_backfills WHERE backfill_id = ? GROUP BY status",
        plan.backfill_id,
    )
    assert states == [("completed", plan.total)]
    per_day = project.query("SELECT day, count(*) FROM {ds}.events GROUP BY day ORDER BY day")
    assert per_day == [(d, 3) for d in DAYS]
    dupes = project.query("SELECT id FROM {ds}.events GROUP BY id HAVING count(*) > 1")
    assert dupes == []
    return ledger


def test_four_concurrent_processes_execute_each_chunk_once(postgres_project) -> None:
    plan = BackfillPlan.build("daily", FROM, TO, "1d")
    procs = [postgres_project.popen(*ARGS, env=SLOW) for _ in range(4)]
    outputs = [p.communicate(timeout=240) for p in procs]
    codes = [p.returncode for p in procs]
    assert set(codes) <= {0, 1}, [err[-2000:] for _, err in outputs]
    completed = [
        int(re.search(r": (\d+) completed", out).group(1))  # type: ignore[union-attr]
        for out, _ in outputs
    ]
    # every chunk was executed by exactly one of the four processes
    assert sum(completed) == plan.total, (completed, [o for o, _ in outputs])
    ledger = _exactly_once(postgres_project, plan)
    print(f"4 processes: completed per process {completed}, ledger rows per run_id {ledger}")
    # the work was actually shared (more than one process ran chunks)
    assert sum(1 for c in completed if c) >= 2
    # a fifth invocation is a no-op
    again = postgres_project.cli(*ARGS)
    assert again.returncode == 0 and "0 completed, 10 skipped" in again.stdout


def test_workers_subprocesses_on_postgres(postgres_project) -> None:
    plan = BackfillPlan.build("daily", FROM, TO, "1d")
    done = postgres_project.cli(*ARGS, "--workers", "4", env=SLOW)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "10 completed, 0 skipped" in done.stdout
    assert done.stderr.count(": completed (3 records)") == 10  # progress lines: stderr
    assert "held by another worker" not in done.stderr  # siblings are not "another worker"
    _exactly_once(postgres_project, plan)
    holders = {
        h.rsplit("/", 1)[-1]
        for (h,) in postgres_project.query("SELECT claimed_by FROM {ds}._dlt_backfills")
    }
    assert len(holders) >= 2, holders  # chunks were spread over worker processes


def test_workers_on_duckdb_run_serialized_and_correct(duckdb_project) -> None:
    plan = BackfillPlan.build("daily", FROM, TO, "1d")
    done = duckdb_project.cli(*ARGS, "--workers", "3", env={"BF_ROWS_PER_DAY": "3"})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "backfill.workers_serialized" in done.stderr
    _exactly_once(duckdb_project, plan)


def test_workers_stop_at_first_failure(postgres_project) -> None:
    env = {**SLOW, "BF_FAIL_DAYS": "2026-01-02"}
    done = postgres_project.cli(*ARGS, "--workers", "2", env=env)
    assert done.returncode == 1
    assert "chunk 2/10" in done.stderr and "injected failure" in done.stderr
    states = dict(postgres_project.query("SELECT chunk_id, status FROM {ds}._dlt_backfills"))
    assert states["000001"] == "failed"
    # the stop file halted both workers well before the end of the window
    assert list(states.values()).count("pending") >= 4, states
    assert "running" not in states.values() and "claimed" not in states.values()
