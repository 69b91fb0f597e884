"""Each attempt of a chunk keeps its own ledger row; a dead attempt is closed, never overwritten.

A backfill is SIGKILLed while chunk 3 extracts (with the default 10-minute lease); the re-run on
the same host reclaims the chunk at once (its holder's pid is gone), closes the killed attempt's
ledger row as ``failed`` with the reason, and its own attempt gets a row of its own.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

from dlt_ops.backfill.plan import BackfillPlan

from .conftest import DLT_OPS, Project

FROM, TO = "2026-01-01T00:00:00Z", "2026-01-05T00:00:00Z"  # 4 daily chunks
ENV = {"BF_ROWS_PER_DAY": "5", "BF_DAYS": "6"}
ARGS = ("pipeline", "backfill", "daily", "--from", FROM, "--to", TO, "--chunk", "1d")
HANG_DAY = "2026-01-03"


def _kill_mid_chunk(project: Project, marks: Path) -> None:
    """Start the backfill, wait until chunk 3's source is extracting, SIGKILL the process."""
    import os

    env = {**os.environ, **project.env, **ENV, "BF_HANG_DAYS": HANG_DAY, "BF_MARK_DIR": str(marks)}
    proc = subprocess.Popen(
        [DLT_OPS, "--root", str(project.root), *ARGS],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not (marks / HANG_DAY).exists():  # the source writes this file, then blocks
        assert proc.poll() is None, "the backfill ended before reaching the hanging chunk"
        assert time.monotonic() < deadline, "the hanging chunk never started"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)


def test_sigkill_mid_chunk_then_immediate_rerun(project: Project, tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    _kill_mid_chunk(project, marks)
    plan = BackfillPlan.build("daily", FROM, TO, "1d")
    killed = plan.chunks[2]

    rerun = project.cli(*ARGS, env=ENV)  # no waiting for the 10-minute lease
    assert rerun.returncode == 0, (rerun.stdout, rerun.stderr[-3000:])
    assert "1 skipped" not in rerun.stdout and "2 skipped" in rerun.stdout, rerun.stdout

    rows = project.query(
        "SELECT run_id, status, records_loaded, error_summary, pid FROM {ds}._dlt_ops_runs "
        "WHERE backfill_id = ? ORDER BY started_at",
        plan.backfill_id,
    )
    attempts = [r for r in rows if r[0] == killed.run_id]
    assert len(attempts) == 2, rows
    first, second = attempts
    assert first[1] == "failed" and first[2] is None, first  # the killed attempt: closed
    assert "abandoned" in first[3] and str(first[4]) in first[3], first[3]
    assert second[1] == "completed" and second[2] == 5, second
    assert not [r for r in rows if r[1] == "running"], rows

    loaded = project.query("SELECT count(*) FROM {ds}.events")[0][0]
    assert loaded == 20
    ledger_sum = sum(r[2] or 0 for r in rows)
    assert ledger_sum == loaded, rows  # summing the ledger never double counts

    shown = json.loads(project.cli("backfill", "show", plan.backfill_id, "--json").stdout)
    assert shown["records_loaded"] == loaded
    (receipt,) = shown["receipt"]
    assert receipt["rows_loaded"] == loaded, receipt


def test_a_live_holder_keeps_its_chunk_and_the_message_says_until_when(
    postgres_project: Project, tmp_path: Path
) -> None:
    import os

    marks = tmp_path / "marks"
    marks.mkdir()
    env = {**os.environ, **ENV, "BF_HANG_DAYS": "2026-01-01", "BF_MARK_DIR": str(marks)}
    holder = subprocess.Popen(
        [DLT_OPS, "--root", str(postgres_project.root), *ARGS],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not (marks / "2026-01-01").exists():  # the holder is extracting chunk 1
            assert holder.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        other = postgres_project.cli(*ARGS, env=ENV)
        assert other.returncode == 1, other.stderr[-3000:]  # chunk 1 is not covered
        line = next(x for x in other.stderr.splitlines() if x.startswith("chunk 1/4"))
        assert "held by another worker" in line and "until its lease expires at" in line, line
        assert "3 completed" in other.stdout and "1 held elsewhere" in other.stdout
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=60)
