"""What ``runs show`` says about a run's start (issue 37): a ``--wait`` run records when it began
waiting (``queued_at``) apart from when it got the source's lease (``started_at``), and shows
the wait; a SIGKILLed run reads ``abandoned`` in ``runs show`` as in ``runs list``. DuckDB, the
real CLI, a source held mid-extract until the test releases it."""

from __future__ import annotations

import json
import signal
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from tests.conftest import run_cli
from tests.test_run_lease import CONFIG, HELD_SOURCE, Held, _done, _until


@pytest.fixture
def held(project, tmp_path: Path) -> Held:  # noqa: ANN001
    root = project(CONFIG.format(engine="duckdb"), {"held": HELD_SOURCE})
    return Held(root, {}, tmp_path)


def _rows(root: Path) -> dict[str, tuple]:
    with duckdb.connect(str(root / "held_pipeline.duckdb"), read_only=True) as con:
        found = con.execute("SELECT run_id, queued_at, started_at, completed_at, status "
                            "FROM ds._dlt_ops_runs").fetchall()  # fmt: skip
    return {r[0]: r[1:] for r in found}


def test_wait_is_recorded_apart_from_the_run(held: Held) -> None:
    first = held.start()
    waiting = held.run("--wait")
    log: list[str] = []
    reader = threading.Thread(target=lambda: log.extend(iter(waiting.stderr.readline, "")))
    reader.start()
    _until(lambda: any("waiting for 'held'" in line for line in log), waiting, "the wait")
    held.release.write_text("go")
    code, out, err = _done(first)
    assert code == 0, err[-3000:]
    waiting.wait(timeout=180)
    reader.join(timeout=30)
    assert waiting.returncode == 0, "".join(log)[-3000:]
    first_id, second_id = json.loads(out)["run_id"], json.loads(waiting.stdout.read())["run_id"]
    rows = _rows(held.root)
    queued, started, _, status = rows[second_id]
    assert status == "completed" and queued is not None
    # it started once the first run let go of the lease, not when the command began waiting
    first_done = rows[first_id][2]
    assert queued < first_done <= started
    assert rows[first_id][0] is None  # the first run never waited

    shown = run_cli("runs", "show", second_id, cwd=held.root)
    assert shown.returncode == 0, shown.stderr[-3000:]
    assert "queued " in shown.stdout and "for the source's lease" in shown.stdout
    doc = json.loads(run_cli("runs", "show", second_id, "--json", cwd=held.root).stdout)
    assert doc["waited_s"] == pytest.approx((started - queued).total_seconds(), abs=0.01)
    assert (
        json.loads(run_cli("runs", "show", first_id, "--json", cwd=held.root).stdout)["waited_s"]
        is None
    )


def test_runs_show_agrees_with_runs_list_on_abandoned(held: Held) -> None:
    proc = held.start()
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    long_ago = datetime.now(UTC) - timedelta(hours=1)  # no heartbeat for an hour
    with duckdb.connect(str(held.root / "held_pipeline.duckdb")) as con:
        con.execute("UPDATE ds._dlt_ops_runs SET started_at = ?, heartbeat_at = ?",
                    [long_ago, long_ago])  # fmt: skip
    listed = run_cli("runs", "list", "--json", cwd=held.root)
    ((row,),) = [json.loads(listed.stdout)]
    text = run_cli("runs", "list", cwd=held.root).stdout
    assert row["status"] == "running" and " abandoned " in text  # the ledger's word, and ours
    shown = run_cli("runs", "show", "last", cwd=held.root)
    assert shown.returncode == 0, shown.stderr[-3000:]
    assert shown.stdout.splitlines()[0].endswith("— abandoned"), shown.stdout
    assert "heartbeat stopped" in shown.stdout
    doc = json.loads(run_cli("runs", "show", "last", "--json", cwd=held.root).stdout)
    assert doc["abandoned"] is True and doc["run"]["status"] == "running"
