"""A backfill's mapped-task callable, run from 4 processes at once on one backfill (the
multi-worker case on one machine): each chunk executes exactly once (issue 13)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.backfill.conftest import build_project

FROM, TO = "2026-01-01T00:00:00Z", "2026-01-11T00:00:00Z"

WORKER = """
import random, sys
from dlt_ops.orchestration import run_backfill_chunk

root, seed = sys.argv[1], int(sys.argv[2])
order = list(range(10))
random.Random(seed).shuffle(order)
for index in order:
    status = run_backfill_chunk(root, "daily", "{FROM}", "{TO}", "1d", index)
    print(index, status, flush=True)
"""


@pytest.mark.integration
def test_four_processes_run_each_chunk_once(tmp_path: Path, postgres_database: Any) -> None:
    from dlt_ops.orchestration import check_backfill, seed_backfill

    project = build_project(tmp_path / "proj", "postgres", postgres_database)
    assert seed_backfill(project.root, "daily", FROM, TO, "1d") == list(range(10))
    script = WORKER.replace("{FROM}", FROM).replace("{TO}", TO)
    env = {**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false", "BF_DAYS": "10"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(project.root), str(k)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for k in range(4)
    ]
    outs = [p.communicate(timeout=600) for p in procs]
    for proc, (_out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, err[-3000:]
    completed = project.query(
        "SELECT run_id, count(*) FROM {ds}._dlt_ops_runs WHERE trigger_source = 'backfill' "
        "AND status = 'completed' GROUP BY run_id"
    )
    assert len(completed) == 10 and all(n == 1 for _, n in completed), completed
    assert project.query("SELECT count(*) FROM {ds}._dlt_ops_runs") == [(10,)]
    assert project.query("SELECT count(*), count(DISTINCT id) FROM {ds}.events") == [(10, 10)]
    assert check_backfill(project.root, "daily", FROM, TO, "1d") == 10
    # a cleared task re-run resumes rather than reloads: the chunk is skipped as completed
    assert seed_backfill(project.root, "daily", FROM, TO, "1d") == []
    from dlt_ops.orchestration import run_backfill_chunk

    assert run_backfill_chunk(project.root, "daily", FROM, TO, "1d", 3) == "completed"
    assert project.query("SELECT count(*) FROM {ds}._dlt_ops_runs") == [(10,)]
