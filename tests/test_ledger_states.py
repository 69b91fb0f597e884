"""`pipeline status`'s four ledger states on real DuckDB and PostgreSQL, plus `abandoned?`."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

DUCKDB = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"
heartbeat_seconds = 0.5

[sources.events_src.dlt_ops]
schedule = "@daily"

[sources.slow_src.dlt_ops]
schedule = "@daily"
"""

POSTGRES = """
[dlt_ops]
default_destination = "postgres"
default_dataset = "ds"
connect_timeout = 3

[sources.events_src.dlt_ops]
schedule = "@daily"
"""


def _status(cli, root: Path, env: dict[str, str] | None = None) -> dict[str, dict]:  # noqa: ANN001
    proc = cli("pipeline", "status", "--json", cwd=root, env=env)
    assert proc.returncode == 0, proc.stderr
    return {s["source"]: s for s in json.loads(proc.stdout)}


STATES = """
[dlt_ops]
default_destination = "duckdb"

[sources.events_src.dlt_ops]
schedule = "@daily"
dataset = "ds"

[sources.nods_src.dlt_ops]
schedule = "@daily"

[sources.fs_src.dlt_ops]
schedule = "@daily"
dataset = "ds"
destination = "filesystem"

[sources.typo_src.dlt_ops]
schedule = "@daily"
dataset = "ds"
destination = "duckbd"
"""


def test_duckdb_states(project, templates, cli) -> None:  # noqa: ANN001
    names = ("events_src", "nods_src", "fs_src", "typo_src")
    sources = {name: templates["events"] for name in names}
    root = project(STATES, sources)
    states = _status(cli, root)
    assert states["events_src"]["ledger"] == "missing" and states["events_src"]["error"] is None
    assert states["nods_src"]["ledger"] == "unreadable"
    assert "No dataset configured" in states["nods_src"]["error"]
    assert states["fs_src"]["ledger"] == "unsupported"
    assert (
        states["fs_src"]["error"]
        == "destination 'filesystem' has no DestinationAdapter (core mode)"
    )
    # a name dlt has no destination for is a broken config, not a core-tier destination
    assert states["typo_src"]["ledger"] == "unreadable"
    assert "dlt has no destination named 'duckbd'" in states["typo_src"]["error"]
    assert not (root / "events_src_pipeline.duckdb").exists(), "status must not create files"

    assert cli("pipeline", "run", "-s", "events_src", "-y", cwd=root).returncode == 0
    states = _status(cli, root)
    assert states["events_src"]["ledger"] == "ok"
    assert [r["status"] for r in states["events_src"]["runs"]] == ["completed"]

    text = cli("pipeline", "status", cwd=root).stdout
    assert "! ledger unreadable: No dataset configured" in text
    assert "! ledger unsupported: destination 'filesystem' has no DestinationAdapter" in text
    assert "! ledger unreadable: dlt has no destination named 'duckbd'" in text


LANES = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"

[sources.a_src.dlt_ops]
schedule = "@daily"

[sources.b_src.dlt_ops]
schedule = "@daily"

[sources.c_src.dlt_ops]
schedule = "@daily"

[sources.d_src.dlt_ops]
schedule = "@daily"
"""


def test_status_reads_many_databases_side_by_side(project, templates, cli) -> None:  # noqa: ANN001
    # one DuckDB file per source: each is read on its own lane, the answer keeps source order
    names = ("a_src", "b_src", "c_src", "d_src")
    root = project(LANES, {name: templates["events"] for name in names})
    ran = {}
    for name in ("c_src", "a_src", "b_src"):
        proc = cli("pipeline", "run", "-s", name, "-y", "--json", cwd=root)
        assert proc.returncode == 0, proc.stderr
        ran[name] = json.loads(proc.stdout)["run_id"]
    proc = cli("pipeline", "status", "--json", cwd=root)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [s["source"] for s in doc] == list(names)
    for state in doc[:3]:
        assert state["ledger"] == "ok"
        assert [(r["source_section"], r["run_id"]) for r in state["runs"]] == [
            (state["source"], ran[state["source"]])
        ]
    assert doc[3]["ledger"] == "missing" and doc[3]["runs"] == []


def test_postgres_states(project, templates, cli, postgres_database) -> None:  # noqa: ANN001
    root = project(POSTGRES, {"events_src": templates["events"]})
    env = {"DESTINATION__POSTGRES__CREDENTIALS": postgres_database.dlt_url}
    assert _status(cli, root, env)["events_src"]["ledger"] == "missing"
    run = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root, env=env)
    assert run.returncode == 0, run.stderr
    state = _status(cli, root, env)["events_src"]
    assert state["ledger"] == "ok" and state["runs"][0]["records_loaded"] == 6

    with socket.socket() as sock:  # a port nobody listens on: the server is "down"
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    down = {
        "DESTINATION__POSTGRES__CREDENTIALS": f"postgresql://loader:s3cret-pw@127.0.0.1:{closed}/nowhere"
    }
    started = time.monotonic()
    proc = cli("pipeline", "status", "--json", cwd=root, env=down)
    assert proc.returncode == 0
    state = json.loads(proc.stdout)[0]
    assert state["ledger"] == "unreadable" and "127.0.0.1" in state["error"]
    assert "s3cret-pw" not in proc.stdout + proc.stderr
    assert time.monotonic() - started < 15


def test_sigkilled_run_shows_as_abandoned(project, templates, cli, blocking_run) -> None:  # noqa: ANN001
    root = project(DUCKDB, {"slow_src": templates["blocking"]})
    proc = blocking_run(root, "slow_src")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 30
    while True:  # the heartbeat is 0.5 s: the row turns abandoned? after 1.5 s without one
        run = _status(cli, root)["slow_src"]["runs"][0]
        if run["abandoned"] or time.monotonic() > deadline:
            break
    assert run["status"] == "running" and run["abandoned"] is True
    assert run["pid"] == proc.pid
    text = cli("pipeline", "status", "-s", "slow_src", cwd=root).stdout
    assert "abandoned?" in text and "no heartbeat for" in text
    listed = cli("runs", "list", cwd=root).stdout.splitlines()
    assert listed[1].split()[3] == "abandoned", listed  # not 'running'
    alert = cli("pipeline", "status", "-s", "slow_src", "--fail-on", "stale", cwd=root)
    assert alert.returncode == 1


def test_status_during_a_duckdb_run_is_running(project, templates, cli, blocking_run) -> None:  # noqa: ANN001
    root = project(DUCKDB, {"slow_src": templates["blocking"]})
    proc = blocking_run(root, "slow_src")
    try:
        # the run is mid-extract and heartbeats every 0.5 s: the file is free between writes
        for _ in range(3):
            state = _status(cli, root)["slow_src"]
            assert state["ledger"] == "ok", state
            assert state["runs"][0]["status"] == "running"
        text = cli("pipeline", "status", "-s", "slow_src", cwd=root).stdout
        assert "running" in text and "unreadable" not in text
    finally:
        (root.parent / "slow_src.release").write_text("go")
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "non-fatal" not in err  # no ledger write was refused by the readers
    assert _status(cli, root)["slow_src"]["runs"][0]["status"] == "completed"


# What dlt's load step does to the file. A live run opens the file for a moment at each
# heartbeat, so the holder, like any second process, retries until the file is free.
HOLD_FILE = """
import sys, time, duckdb
deadline = time.monotonic() + 30
while True:
    try:
        con = duckdb.connect(sys.argv[1])
        break
    except duckdb.IOException:
        if time.monotonic() > deadline:
            raise
        time.sleep(0.01)
print("held", flush=True)
sys.stdin.read()
"""


@contextmanager
def _file_held(path: Path) -> Iterator[None]:
    holder = subprocess.Popen([sys.executable, "-c", HOLD_FILE, str(path)], text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield
    finally:
        holder.communicate("", timeout=30)


def test_status_while_the_run_holds_the_duckdb_file(project, templates, cli, blocking_run) -> None:  # noqa: ANN001
    root = project(DUCKDB, {"slow_src": templates["blocking"]})
    proc = blocking_run(root, "slow_src")
    try:
        row = _status(cli, root)["slow_src"]["runs"][0]
        assert row["status"] == "running"
        with _file_held(root / "slow_src_pipeline.duckdb"):  # busy past the readers' retries
            state = _status(cli, root)["slow_src"]
            text = cli("pipeline", "status", "-s", "slow_src", cwd=root).stdout
        assert state["ledger"] == "ok", state
        [live] = state["runs"]
        assert live["status"] == "running" and live["run_id"] == row["run_id"]
        assert live["pid"] == proc.pid and live["trigger_source"] == row["trigger_source"]
        assert "database file is busy" in state["note"]
        assert "running" in text and "database file is busy" in text and "unreadable" not in text
    finally:
        (root.parent / "slow_src.release").write_text("go")
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    state = _status(cli, root)["slow_src"]
    assert state["runs"][0]["status"] == "completed" and "note" not in state
    with _file_held(root / "slow_src_pipeline.duckdb"):  # busy, but no live run: no guess
        state = _status(cli, root)["slow_src"]
    assert state["ledger"] == "unreadable" and state["runs"] == []


@pytest.mark.parametrize("flag", ["failed", "stale"])
def test_fail_on_is_quiet_when_healthy(project, templates, cli, flag: str) -> None:  # noqa: ANN001
    root = project(DUCKDB, {"events_src": templates["events"]})
    assert cli("pipeline", "run", "-s", "events_src", "-y", cwd=root).returncode == 0
    assert cli("pipeline", "status", "--fail-on", flag, cwd=root).returncode == 0


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_run_ends_its_row_as_failed(project, templates, cli, blocking_run, sig) -> None:  # noqa: ANN001
    root = project(DUCKDB, {"slow_src": templates["blocking"]})
    proc = blocking_run(root, "slow_src")
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "error: interrupted" in err
    run = _status(cli, root)["slow_src"]["runs"][0]
    assert run["status"] == "failed" and run["error_summary"].startswith("KeyboardInterrupt")


def test_unreachable_destination_fails_the_run_not_the_bookkeeping(project, templates, cli) -> None:  # noqa: ANN001
    root = project(POSTGRES, {"events_src": templates["events"]})
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = sock.getsockname()[1]
    env = {"DESTINATION__POSTGRES__CREDENTIALS":
           f"postgresql://loader:pl4nted-s3cret@127.0.0.1:{closed}/nowhere"}  # fmt: skip
    proc = cli("--log-format", "json", "pipeline", "run", "-s", "events_src", "-y",
               cwd=root, env=env)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert (
        "Failed to write run-start row to _dlt_ops_runs (non-fatal, run continues)" in proc.stderr
    )
    assert "Traceback" not in proc.stderr
    assert "pl4nted-s3cret" not in proc.stdout + proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: DestinationUnreachableError: could not reach postgres"), last
