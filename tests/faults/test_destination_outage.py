"""The destination goes away mid-run — stopped (``pg_ctl -m immediate``) or frozen (``SIGSTOP``
on every server process) — and comes back: every row lands exactly once, the ledger books what
landed, and no row is left ``running``. A run that failed because its destination was stopped
could not write its own failure: once the server is back, ``status`` shows it failed with the
connection error (kept in the project's outbox), never "abandoned", and the next run writes it
to the ledger row.

Each test starts its own PostgreSQL server (the session's shared one must not be stopped).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dlt_ops.testing.postgres import PostgresServer, find_bindir, running_postgres

from ._project import (
    FaultProject,
    has_normalized_package,
    make_project,
    wait_for,
    wait_for_line,
)

ROWS, PAGES = 4000, 8
#: mid-extract trials: slow pages; mid-load trials: enough rows that the load takes a while
SCENARIOS = {
    "page 2": (ROWS, {"FT_ROWS": str(ROWS), "FT_PAGES": str(PAGES), "FT_PAGE_SLEEP": "0.3"}),
    "normalized": (60000, {"FT_ROWS": "60000", "FT_PAGES": "6", "FT_PAGE_SLEEP": "0"}),
}


class Server:
    """A private PostgreSQL server that a test may stop, restart, freeze and thaw."""

    def __init__(self, server: PostgresServer) -> None:
        assert server.data_dir is not None, "needs a server the suite started itself"
        self.server, self.data = server, server.data_dir
        self.bindir = find_bindir()

    def _ctl(self, *args: str) -> None:
        cmd = [str(self.bindir / "pg_ctl"), "-D", str(self.data), *args]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)

    def stop(self) -> None:
        self._ctl("-m", "immediate", "-w", "stop")

    def start(self) -> None:
        from dlt_ops.testing import postgres as pg

        root = self.data.parent
        opts = f"-h 127.0.0.1 -p {self.server.port} -k {root} {pg._SERVER_OPTIONS}"
        self._ctl("-l", str(root / "server.log"), "-w", "-t", "60", "-o", opts, "start")

    def _pids(self) -> list[int]:
        postmaster = int((self.data / "postmaster.pid").read_text().split()[0])
        children = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == postmaster:
                children.append(int(stat.parent.name))
        return [postmaster, *children]

    def signal(self, sig: signal.Signals) -> None:
        for pid in self._pids():
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass


@pytest.fixture
def server() -> Iterator[Server]:
    from dlt_ops.testing.postgres import PostgresUnavailable

    try:
        with running_postgres() as pg:
            if pg.data_dir is None:
                pytest.skip("an external PostgreSQL (DLTOPS_TEST_POSTGRES_URL) cannot be stopped")
            srv = Server(pg)
            try:
                yield srv
            finally:
                srv.signal(signal.SIGCONT)  # never leave a frozen server behind
    except PostgresUnavailable as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(str(exc))


def _project(tmp_path: Path, server: Server, k: int) -> FaultProject:
    db = server.server.create_database()
    return make_project(tmp_path / f"t{k}", "postgres", db=db)


def _verify(project: FaultProject, figures, rows: int) -> None:  # noqa: ANN001
    rerun = project.cli("pipeline", "run", "-s", project.name, "-y", env={"FT_ROWS": str(rows)})
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    total, distinct = project.query("SELECT count(*), count(DISTINCT id) FROM {ds}.items")[0]
    figures.add(expected=rows, loaded=total, distinct=distinct)
    ledger = project.ledger()
    assert [r for r in ledger if r[1] == "running"] == [], ledger
    booked = sum(r[2] or 0 for r in ledger)  # a dead run's row books what its load committed
    assert booked == total, f"ledger books {booked} rows, the table holds {total}: {ledger}"
    errors = project.query("SELECT error_summary FROM {ds}._dlt_ops_runs WHERE status = 'failed'")
    assert not [e for (e,) in errors if (e or "").startswith("abandoned")], errors
    assert not list((project.root / ".dlt-ops" / "outbox").glob("*.json")), "outbox not flushed"


def _status_shows_the_cause(project: FaultProject) -> None:
    """The failed run's cause, kept while the ledger was gone, is what ``status`` shows."""
    shown = project.cli("pipeline", "status", "-s", project.name, "--json")
    assert shown.returncode == 0, shown.stderr[-2000:]
    import json

    runs = json.loads(shown.stdout)[0]["runs"]
    newest = runs[0]
    assert newest["status"] == "failed" and not newest["abandoned"], runs
    error = newest["error_summary"] or ""
    assert not error.startswith("abandoned"), error
    assert re.search(r"connect|server", error, re.IGNORECASE), error
    text = project.cli("pipeline", "status", "-s", project.name).stdout
    assert "probably died" not in text and error[:40] in text, text
    shown = project.cli("runs", "show", newest["run_id"], "--json")
    assert json.loads(shown.stdout)["run"]["status"] == "failed", shown.stdout + shown.stderr


def _stop(server: Server, proc: subprocess.Popen[str]) -> str:
    """Stop the server; the run fails or finishes by itself; start the server again."""
    server.stop()
    proc.wait(timeout=300)
    server.start()
    return "stopped"


def _freeze(server: Server, proc: subprocess.Popen[str]) -> str:
    """Freeze every server process for ~3 s (or until the run gave up), then thaw."""
    server.signal(signal.SIGSTOP)
    frozen_at = time.monotonic()
    try:
        proc.wait(timeout=3)
    except subprocess.TimeoutExpired:
        pass
    server.signal(signal.SIGCONT)
    return f"frozen for {time.monotonic() - frozen_at:.1f}s"


@pytest.mark.integration
@pytest.mark.parametrize("fault", [_stop, _freeze], ids=["stopped", "frozen"])
def test_destination_goes_away_mid_run(tmp_path: Path, server: Server, figures, fault) -> None:  # noqa: ANN001
    for k, when in enumerate(("page 2", "normalized")):
        project = _project(tmp_path, server, k)
        progress = project.root / "progress.txt"
        rows, env = SCENARIOS[when]
        proc = project.popen("pipeline", "run", "-s", project.name, "-y",
                             env={**env, "FT_PROGRESS": str(progress)})  # fmt: skip
        if when == "normalized":
            wait_for(lambda p=project: has_normalized_package(p), proc)
        else:
            wait_for_line(progress, when, proc)
        what = fault(server, proc)
        _, err = proc.communicate(timeout=300)
        figures.notes.append(f"{what} at {when}: run exit {proc.returncode}")
        assert proc.returncode in (0, 1), err[-2000:]
        assert "Traceback" not in err
        if fault is _stop:
            _status_shows_the_cause(project)
        _verify(project, figures, rows)
    figures.check()
