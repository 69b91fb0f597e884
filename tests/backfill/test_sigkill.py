"""SIGKILL a backfill at random points, re-run after the lease expired: the window is covered,
every row is loaded exactly once (merge), no chunk is left stuck, no manual SQL."""

from __future__ import annotations

import queue
import random
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, replace
from datetime import UTC, datetime

import pytest

from dlt_ops.backfill.plan import BackfillPlan
from tests.faults.figures import FIGURES_PROPERTY, Figures

from .conftest import build_project

FROM, TO = "2026-01-01T00:00:00Z", "2026-01-05T00:00:00Z"  # 4 daily chunks
DAYS = [f"2026-01-0{d}" for d in range(1, 5)]
ENV = {"BF_ROWS_PER_DAY": "5", "BF_DAYS": "6", "BF_SLEEP_S": "0.1"}
LEASE = "2s"
TRIALS = {"duckdb": 6, "postgres": 6}  # + 16 run trials in tests/faults/test_sigkill.py
_COUNTING = threading.Lock()


def _args(dataset: str) -> tuple[str, ...]:
    return (
        "pipeline", "backfill", "daily", "--from", FROM, "--to", TO, "--chunk", "1d",
        "--lease", LEASE, "--dataset", dataset,
    )  # fmt: skip


def _wait_for_expiry(project, timeout: float = 30.0) -> None:
    """Poll the clock until every lease the killed worker held (chunks, load lock) expired."""
    queries = [
        "SELECT max(lease_expires_at) FROM {ds}._dlt_backfills "
        "WHERE status IN ('claimed', 'running')",
        "SELECT max(lease_expires_at) FROM {ds}._dlt_backfill_locks WHERE holder IS NOT NULL",
    ]
    leases = []
    for sql, table in zip(queries, ("_dlt_backfills", "_dlt_backfill_locks"), strict=True):
        if project.table_exists(table):
            leases += [v for (v,) in project.query(sql) if v is not None]
    if not leases:
        return
    until, deadline = max(leases), time.monotonic() + timeout
    while datetime.now(UTC) <= until:  # polling the clock, bounded; no blind sleep
        assert time.monotonic() < deadline, f"lease {until} never expired"
        time.sleep(0.05)


def _trial(base, k: int, point: tuple[int, float], figures: Figures) -> str:
    """Kill after the ``lines``-th chunk line (+``extra`` s), or ``extra`` s into start-up."""
    lines, extra = point
    dataset = f"bf_kill_{k}"
    project = replace(base, dataset=dataset)
    if project.engine == "duckdb":  # one database file per trial, so trials can overlap
        project = build_project(base.root.parent / f"trial_{k}", "duckdb")
        project.dataset = dataset
    proc = project.popen(*_args(dataset), env={**ENV, "PYTHONUNBUFFERED": "1"})
    seen: queue.Queue[str | None] = queue.Queue()
    chunk_lines = (x for x in proc.stderr if x.startswith("chunk "))  # type: ignore[union-attr]
    threading.Thread(target=lambda: [seen.put(x) for x in chunk_lines] and seen.put(None),
                     daemon=True).start()  # fmt: skip
    for _ in range(lines):  # wait for the process to reach the chosen point
        if seen.get(timeout=60) is None:
            break
    kill_at = time.monotonic() + extra
    while time.monotonic() < kill_at and proc.poll() is None:
        time.sleep(0.01)
    outcome = "finished before the kill"
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
        outcome = "killed"
    proc.wait(timeout=60)
    done = 0
    if project.table_exists("_dlt_backfills"):
        sql = "SELECT count(*) FROM {ds}._dlt_backfills WHERE status = 'completed'"
        done = project.query(sql)[0][0]
    _wait_for_expiry(project)
    rerun = project.cli(*_args(dataset), env=ENV)
    assert rerun.returncode == 0, (k, rerun.stdout, rerun.stderr[-3000:])
    plan = BackfillPlan.build("daily", FROM, TO, "1d")
    states = project.query(
        "SELECT status FROM {ds}._dlt_backfills WHERE backfill_id = ?", plan.backfill_id
    )
    assert sorted(s for (s,) in states) == ["completed"] * 4, states  # nothing stuck
    per_day = project.query("SELECT day, count(*) FROM {ds}.events GROUP BY day ORDER BY day")
    assert per_day == [(d, 5) for d in DAYS], (k, per_day)  # nothing lost
    assert project.query("SELECT id FROM {ds}.events GROUP BY id HAVING count(*) > 1") == []
    total, distinct = project.query("SELECT count(*), count(DISTINCT id) FROM {ds}.events")[0]
    with _COUNTING:  # two trials run at once
        figures.add(expected=5 * len(DAYS), loaded=total, distinct=distinct)
    return f"{outcome} after line {lines} +{extra:.2f}s with {done}/4 chunk(s) done"


@pytest.mark.slow
def test_sigkill_trials(project, request) -> None:  # noqa: ANN001
    figures = Figures(family="backfill_sigkill", scenario=request.node.name.removeprefix("test_"))
    rng = random.Random(7 + len(project.engine))
    # kill points: during start-up/seeding (line 0), or after one of the 8 chunk lines
    # ("running" → mid extract/normalize/load; "completed" → between chunks), plus jitter
    points = [
        (0, rng.uniform(0.5, 1.5))
        if rng.random() < 0.15
        else (rng.randint(1, 7), rng.uniform(0, 0.35))
        for _ in range(TRIALS[project.engine])
    ]
    with ThreadPoolExecutor(max_workers=2) as pool:  # trials wait on leases: overlap them
        results = list(pool.map(lambda kp: _trial(project, *kp, figures), enumerate(points)))
    killed = sum(1 for r in results if r.startswith("killed"))
    print(f"{project.engine}: {len(results)} SIGKILL trials, {killed} killed mid-run: {results}")
    assert killed >= len(results) * 0.7  # the kill points really fall inside the run
    figures.notes.append(f"{killed} killed mid-run")
    figures.check()
    # through the report, as the fault suite's figures travel (docs/fault-figures.json)
    request.node.user_properties.append((FIGURES_PROPERTY, asdict(figures)))
