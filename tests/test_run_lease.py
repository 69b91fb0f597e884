"""The run lease: one source runs at a time per destination dataset (SPEC §10, issue 13).

Real CLI processes against a real PostgreSQL (the lease row) and DuckDB (a single-writer
engine: the lock file). Synchronisation is by files the source writes and reads, never sleeps.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CLI

#: Extracts ids 1..N (merge on id), announcing itself and waiting for a release file first.
HELD_SOURCE = """
import os
import time
from pathlib import Path

import dlt


@dlt.resource(name="items", primary_key="id", write_disposition="merge")
def items(cursor=dlt.sources.incremental("id")):
    started = os.environ.get("HELD_STARTED")
    if started:
        Path(started).write_text("started")
        while not Path(os.environ["HELD_RELEASE"]).exists():
            time.sleep(0.05)
    yield [{"id": i} for i in range(1, 101)]


@dlt.source(name="{name}")
def {name}_source():
    return items
"""

CONFIG = """
[dlt_ops]
default_destination = "{engine}"
default_dataset = "ds"

[sources.held.dlt_ops]
schedule = "@hourly"
"""


def _env(extra: dict[str, str]) -> dict[str, str]:
    return {**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false", **extra}


def _popen(root: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CLI, "pipeline", "run", "-s", "held", "-y", "--json", *args],
        cwd=root, env=_env(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _until(check: Callable[[], bool], proc: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + 90
    while not check():  # polls a file with a deadline
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            out, err = proc.communicate()
            raise AssertionError(f"{what} never happened: {err[-3000:]}")
        time.sleep(0.05)


class Held:
    """A project whose ``held`` source blocks until released; ``start()`` → the running proc."""

    def __init__(self, root: Path, env: dict[str, str], tmp: Path) -> None:
        self.root, self.env, self.tmp = root, env, tmp
        self.release = tmp / "release"
        self.n = 0

    def start(self, *args: str) -> subprocess.Popen[str]:
        self.n += 1
        started = self.tmp / f"started-{self.n}"
        env = {**self.env, "HELD_STARTED": str(started), "HELD_RELEASE": str(self.release)}
        proc = _popen(self.root, env, *args)
        _until(started.exists, proc, "the held run's extract")
        return proc

    def run(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        return _popen(self.root, {**self.env, **(env or {})}, *args)


@pytest.fixture(params=["postgres", "duckdb"])
def held(request: pytest.FixtureRequest, project, tmp_path: Path) -> Held:  # noqa: ANN001
    engine = request.param
    env: dict[str, str] = {}
    if engine == "postgres":
        db = request.getfixturevalue("postgres_database")
        env["DESTINATION__POSTGRES__CREDENTIALS"] = db.dlt_url
        request.node.db = db
    root = project(CONFIG.format(engine=engine), {"held": HELD_SOURCE})
    h = Held(root, env, tmp_path)
    h.engine = engine  # type: ignore[attr-defined]
    h.db = getattr(request.node, "db", None)  # type: ignore[attr-defined]
    return h


def _query(held: Held, sql: str) -> list[tuple]:
    if held.engine == "postgres":  # type: ignore[attr-defined]
        import psycopg

        with psycopg.connect(held.db.url, autocommit=True) as conn:  # type: ignore[attr-defined]
            return conn.execute(sql).fetchall()
    import duckdb

    with duckdb.connect(str(held.root / "held_pipeline.duckdb"), read_only=True) as con:
        return con.execute(sql).fetchall()


def _done(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=180)
    return proc.returncode, out, err


@pytest.mark.integration
def test_second_run_refused_then_waits(held: Held) -> None:
    first = held.start()
    refused = held.run()
    code, out, err = _done(refused)
    assert code == 1, err[-3000:]
    assert "already running" in err and "held" in err, err[-3000:]
    assert "Pass --wait" in err and "Traceback" not in err
    if held.engine == "postgres":  # type: ignore[attr-defined]
        assert "expires at" in err, err[-3000:]

    code, _, err = _done(held.run("--wait-timeout", "1s"))  # gives up while the holder runs
    assert code == 1 and "Gave up after waiting" in err, err[-3000:]

    waiting = held.run("--wait")
    waiting_log: list[str] = []
    reader = threading.Thread(target=lambda: waiting_log.extend(iter(waiting.stderr.readline, "")))
    reader.start()
    _until(lambda: any("waiting for 'held'" in line for line in waiting_log), waiting,
           "the --wait run's wait")  # fmt: skip
    out1 = _release_both(held, first, waiting, reader, waiting_log)
    first_id = json.loads(out1)["run_id"]
    second = json.loads(waiting.stdout.read())
    assert second["status"] == "completed" and second["run_id"] != first_id
    assert _query(held, "SELECT count(*), count(DISTINCT id) FROM ds.items") == [(100, 100)]
    # the refused run wrote no ledger row; the two that ran did
    assert _query(held, "SELECT count(*) FROM ds._dlt_ops_runs") == [(2,)]
    code, _, err = _done(held.run())  # later runs are unaffected
    assert code == 0, err[-3000:]


@pytest.mark.integration
def test_sigkilled_holder_is_reclaimed_at_once(held: Held) -> None:
    victim = held.start()
    victim.send_signal(signal.SIGKILL)
    victim.communicate(timeout=60)
    held.release.write_text("go")
    code, out, err = _done(held.run())
    assert code == 0, err[-3000:]
    assert json.loads(out)["status"] == "completed"
    rows = _query(held, "SELECT status, error_summary FROM ds._dlt_ops_runs ORDER BY started_at")
    assert [r[0] for r in rows] == ["failed", "completed"], rows
    assert "abandoned" in rows[0][1]


@pytest.mark.integration
def test_each_dataset_has_its_own_working_state(held: Held) -> None:
    for dataset in ("a", "b"):
        code, out, err = _done(held.run("-d", dataset))
        assert code == 0, err[-3000:]
        assert json.loads(out)["records_loaded"] == 100
    for dataset in ("a", "b"):
        assert _query(held, f"SELECT count(*) FROM {dataset}.items") == [(100,)]
    pipelines = held.root / ".dlt-ops" / "pipelines" / held.engine  # type: ignore[attr-defined]
    assert sorted(p.name for p in pipelines.iterdir()) == ["a", "b"]


def test_half_written_working_dir_is_reported_then_dropped(project, tmp_path: Path) -> None:  # noqa: ANN001
    root = project(CONFIG.format(engine="duckdb"), {"held": HELD_SOURCE})
    held = Held(root, {}, tmp_path)
    held.engine = "duckdb"  # type: ignore[attr-defined]
    code, _, err = _done(held.run())
    assert code == 0, err[-3000:]
    working = root / ".dlt-ops" / "pipelines" / "duckdb" / "ds" / "held_pipeline"
    broken = working / "load" / "normalized" / "1764500000.123456"
    broken.mkdir(parents=True)
    (broken / "package_state.json").write_text("{}")  # no schema.json: half-written
    for _ in range(2):  # it says so every time, and nothing is loaded
        code, _, err = _done(held.run())
        assert code == 1, err[-3000:]
        assert "half-written" in err and "--drop-pending" in err, err[-3000:]
    code, out, err = _done(held.run("--drop-pending"))
    assert code == 0, err[-3000:]
    row = json.loads(out)
    assert row["status"] == "completed"
    assert (
        row["error_summary"].startswith("drop-pending:")
        and "1764500000.123456" in row["error_summary"]
    )
    assert not broken.exists()
    # the cursor came back from the destination: nothing twice, nothing lost
    assert _query(held, "SELECT count(*), count(DISTINCT id) FROM ds.items") == [(100, 100)]
    code, _, err = _done(held.run())
    assert code == 0, err[-3000:]


def _running(held: Held) -> list[str]:
    sql = "SELECT run_id FROM ds._dlt_ops_runs WHERE source_section = 'held' AND status = 'running'"
    return [r[0] for r in _query(held, sql)]


def _times(held: Held, run_id: str) -> tuple:
    sql = ("SELECT queued_at, started_at, completed_at FROM ds._dlt_ops_runs "
           f"WHERE run_id = '{run_id}'")  # fmt: skip
    (found,) = _query(held, sql)
    return found


def _release_both(held: Held, first: subprocess.Popen[str], second: subprocess.Popen[str],
                  reader: threading.Thread, lines: list[str]) -> str:  # fmt: skip
    """Release the holder, let both runs end, assert both succeeded; the holder's stdout."""
    held.release.write_text("go")
    code1, out1, err1 = _done(first)
    second.wait(timeout=180)
    reader.join(timeout=30)
    assert code1 == 0, err1[-3000:]
    assert second.returncode == 0, "".join(lines)[-3000:]
    return out1


def _reading(proc: subprocess.Popen[str]) -> tuple[list[str], threading.Thread]:
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stderr.readline, "")))
    reader.start()
    return lines, reader


@pytest.mark.integration
def test_a_run_waiting_for_the_lease_is_not_running_and_its_wait_is_not_run_time(
    held: Held,
) -> None:
    """Issue 38: while a second run waits for the lease, the ledger shows one run of the source
    (the holder); the waiter's row starts when it got the lease and keeps the wait apart."""
    first = held.start()
    waiting = held.run("--wait")
    lines, reader = _reading(waiting)
    _until(lambda: any("waiting for 'held'" in line for line in lines), waiting, "the wait")
    holder = _running(held)
    assert len(holder) == 1, holder  # the waiter wrote no row yet: one running run
    out1 = _release_both(held, first, waiting, reader, lines)
    first_id, second_id = json.loads(out1)["run_id"], json.loads(waiting.stdout.read())["run_id"]
    assert holder == [first_id]
    first_done = _times(held, first_id)[2]
    queued, started, completed = _times(held, second_id)
    # it queued before the holder ended, started after: its run time is its own run only
    assert queued < first_done <= started < completed


#: ``held`` on a timestamp cursor (backfill chunks take a time window), held like HELD_SOURCE.
HELD_TS_SOURCE = """
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path
import time

import dlt

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


@dlt.resource(name="items", primary_key="id", write_disposition="merge")
def items(updated=dlt.sources.incremental("ts", initial_value=T0)):
    started = os.environ.get("HELD_STARTED")
    if started:
        Path(started).write_text("started")
        while not Path(os.environ["HELD_RELEASE"]).exists():
            time.sleep(0.05)
    for i in range(48):
        ts = T0 + timedelta(hours=i)
        if updated.start_value <= ts and (updated.end_value is None or ts < updated.end_value):
            yield {"id": i, "ts": ts}


@dlt.source(name="{name}")
def {name}_source():
    return items
"""

CHUNK_TASK = """
import sys
from dlt_ops.log import configure_logging
from dlt_ops.orchestration import run_backfill_chunk

configure_logging()  # its log on stderr, as a task's log

print(run_backfill_chunk(sys.argv[1], "held", "2024-01-01T00:00Z", "2024-01-02T00:00Z", "1d", 0,
                         trigger_source="airflow"))
"""


@pytest.mark.integration
@pytest.mark.parametrize("engine", ["postgres"])
def test_a_chunk_task_waiting_for_a_plain_run_records_its_wait(
    engine: str,
    project,
    request: pytest.FixtureRequest,
    tmp_path: Path,  # noqa: ANN001
) -> None:
    """The Airflow chunk task's path (``run_backfill_chunk``) behind a plain run of the source:
    no running row while it waits, then queued_at < started_at, the wait outside its run."""
    env: dict[str, str] = {}
    db = None
    if engine == "postgres":
        db = request.getfixturevalue("postgres_database")
        env["DESTINATION__POSTGRES__CREDENTIALS"] = db.dlt_url
    root = project(CONFIG.format(engine=engine), {"held": HELD_TS_SOURCE})
    held = Held(root, env, tmp_path)
    held.engine, held.db = engine, db  # type: ignore[attr-defined]
    first = held.start()
    chunk = subprocess.Popen([sys.executable, "-c", CHUNK_TASK, str(root)], cwd=root,
                             env=_env(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)  # fmt: skip
    lines, reader = _reading(chunk)
    try:
        _until(lambda: any("waiting for 'held'" in line for line in lines), chunk, "the wait")
    except AssertionError as exc:
        reader.join(timeout=30)
        raise AssertionError("".join(lines)[-3000:]) from exc
    holder = _running(held)
    assert len(holder) == 1, holder
    out1 = _release_both(held, first, chunk, reader, lines)
    assert chunk.stdout.read().strip() == "completed"
    first_id = json.loads(out1)["run_id"]
    assert holder == [first_id]
    (chunk_id,) = [r[0] for r in _query(held, "SELECT run_id FROM ds._dlt_ops_runs "
                                              "WHERE backfill_id IS NOT NULL")]  # fmt: skip
    first_done = _times(held, first_id)[2]
    queued, started, completed = _times(held, chunk_id)
    assert queued is not None and queued < first_done <= started < completed
