"""Worker subprocesses orphaned by a SIGKILLed parent stop quietly; a re-run finishes the window.

No ``BrokenPipeError`` traceback: a worker whose parent is gone stops claiming chunks, and one
whose event pipe broke exits without a word (its chunk is reclaimed at once by the re-run on
this host, since the worker's pid is gone).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

from dlt_ops.backfill.plan import BackfillPlan

from .conftest import DLT_OPS

FROM, TO = "2026-01-01T00:00:00Z", "2026-01-07T00:00:00Z"  # 6 daily chunks
ARGS = ("pipeline", "backfill", "daily", "--from", FROM, "--to", TO, "--chunk", "1d")
ENV = {"BF_ROWS_PER_DAY": "2", "BF_DAYS": "8", "BF_SLEEP_S": "1"}


def test_orphaned_workers_exit_quietly(postgres_project) -> None:
    env = {**os.environ, **postgres_project.env, **ENV, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [DLT_OPS, "--root", str(postgres_project.root), *ARGS, "--workers", "2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    lines: list[str] = []
    first_chunk = threading.Event()

    def read() -> None:  # the workers inherit this stderr: EOF once every one of them exited
        for line in proc.stderr:  # type: ignore[union-attr]
            lines.append(line)
            if ": running (run_id=" in line:
                first_chunk.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert first_chunk.wait(timeout=120), "".join(lines)[-3000:]
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 120
    reader.join(timeout=max(deadline - time.monotonic(), 0))
    assert not reader.is_alive(), "orphaned workers never exited"
    after = "".join(lines)
    assert "BrokenPipeError" not in after and "Traceback" not in after, after[-3000:]

    rerun = postgres_project.cli(*ARGS, env=ENV)  # same host: no waiting for the leases
    assert rerun.returncode == 0, (rerun.stdout, rerun.stderr[-3000:])
    plan = BackfillPlan.build("daily", FROM, TO, "1d")
    states = postgres_project.query(
        "SELECT status FROM {ds}._dlt_backfills WHERE backfill_id = ?", plan.backfill_id
    )
    assert [s for (s,) in states] == ["completed"] * 6
    running = postgres_project.query(
        "SELECT count(*) FROM {ds}._dlt_ops_runs WHERE status = 'running'"
    )
    assert running == [(0,)]
