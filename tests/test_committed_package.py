"""A run whose load committed, then lost both its disk and its destination before its books.

dlt wrote the package to ``_dlt_loads``; then its completion marker write failed (ENOSPC) and,
at that moment, PostgreSQL went away: the run can neither see that its load committed nor write
its failure. Once the server is back, ``status`` shows the run failed with that cause (the
outbox), and the next run writes the row, finds the package committed (never loads it again,
although an ended run's package is the next run's to book) and books its rows: each row once,
receipts = completed ledger rows = table.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from dlt_ops.testing.postgres import PostgresUnavailable, running_postgres
from tests.faults._project import make_project
from tests.faults.test_destination_outage import Server

ROWS = 4000
ENV = {"FT_ROWS": str(ROWS), "FT_PAGES": "8", "FT_PAGE_SLEEP": "0"}


@pytest.fixture
def private_server() -> Iterator[Server]:
    try:
        with running_postgres() as pg:
            if pg.data_dir is None:
                pytest.skip("an external PostgreSQL (DLTOPS_TEST_POSTGRES_URL) cannot be stopped")
            srv = Server(pg)
            try:
                yield srv
            finally:
                srv.signal(signal.SIGCONT)
    except PostgresUnavailable as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(str(exc))


def _stop_command(server: Server) -> str:
    # fast, not immediate: the suite's server runs without fsync, and a crash would lose the
    # very commit this test is about
    cmd = [str(server.bindir / "pg_ctl"), "-D", str(server.data), "-m", "fast", "-w", "stop"]
    if os.geteuid() == 0:
        cmd = ["runuser", "-u", "postgres", "--", *cmd]
    return shlex.join(cmd)


@pytest.mark.integration
def test_a_committed_load_whose_books_were_lost_is_booked_once(
    tmp_path: Path, private_server: Server
) -> None:
    db = private_server.server.create_database()
    project = make_project(tmp_path / "proj", "postgres", db=db)
    stop = f"run:{_stop_command(private_server)}"
    first = project.cli("pipeline", "run", "-s", project.name, "-y",
                        env={**ENV, "FT_AFTER_COMMIT": stop})  # fmt: skip
    assert first.returncode == 1, first.stderr[-3000:]
    private_server.start()
    shown = json.loads(project.cli("pipeline", "status", "-s", project.name, "--json").stdout)
    (run,) = shown[0]["runs"]
    assert run["status"] == "failed" and "No space left" in run["error_summary"], run
    rerun = project.cli("pipeline", "run", "-s", project.name, "-y", env=ENV)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    total, distinct = project.query("SELECT count(*), count(DISTINCT id) FROM {ds}.items")[0]
    assert (total, distinct) == (ROWS, ROWS)
    twice = "SELECT load_id FROM {ds}._dlt_loads GROUP BY load_id HAVING count(*) > 1"
    assert project.query(twice) == [], "the committed package was loaded again"
    ledger = project.ledger()
    assert [r[1] for r in ledger] == ["failed", "completed"], ledger
    assert ledger[1][2] == ROWS, ledger
    assert project.receipts_loaded() == ROWS


@pytest.mark.parametrize("engine", ["duckdb", "postgres"])
def test_a_run_killed_between_its_finish_and_its_receipt_gets_its_receipt(
    tmp_path: Path,
    request,
    engine,  # noqa: ANN001
) -> None:
    db = request.getfixturevalue("postgres_database") if engine == "postgres" else None
    project = make_project(tmp_path / "proj", engine, db=db)
    first = project.cli("pipeline", "run", "-s", project.name, "-y",
                        env={**ENV, "FT_AFTER_FINISH": "kill"})  # fmt: skip
    assert first.returncode == -signal.SIGKILL, first.stderr[-3000:]
    assert project.receipts_loaded() == 0  # it died before its receipt
    rerun = project.cli("pipeline", "run", "-s", project.name, "-y", env=ENV)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    ledger = project.ledger()
    assert [(r[1], r[2]) for r in ledger] == [("completed", ROWS), ("completed", 0)], ledger
    assert project.receipts_loaded() == ROWS
    again = project.cli("pipeline", "run", "-s", project.name, "-y", env=ENV)
    assert again.returncode == 0, again.stderr[-3000:]
    assert project.receipts_loaded() == ROWS  # written once
