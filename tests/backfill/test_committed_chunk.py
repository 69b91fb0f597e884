"""A backfill killed right after a chunk's load committed: the chunk is not loaded again.

The chunk's package is in the destination (dlt moved it to ``load/loaded``) when the process is
killed, before the ledger and the backfill state said so. The re-run reclaims the chunk; the new
attempt books what that load committed and does not extract the window again, so an ``append``
table holds each row once and the receipts, the completed ledger rows and the table agree.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.faults._project import FaultProject, make_project, wait_for

ROWS, PAGES = 4000, 8  # rows n at 00:00 + n s: 3,600 in the first hourly chunk, 400 in the next
WINDOW = ("--from", "2026-01-01T00:00:00Z", "--to", "2026-01-01T02:00:00Z", "--chunk", "1h")
ENV = {"FT_ROWS": str(ROWS), "FT_PAGES": str(PAGES), "FT_PAGE_SLEEP": "0"}


def _chunk_loaded(project: FaultProject) -> bool:
    """A chunk's package sits in ``load/loaded`` of its own working directory."""
    try:
        found = project.root.glob(".dlt-ops/backfill/*/*/*/*/load/loaded/*")
        return next(found, None) is not None
    except OSError:
        return False


@pytest.mark.parametrize("engine", ["duckdb", "postgres"])
def test_a_chunk_killed_after_its_commit_loads_once(tmp_path: Path, request, engine) -> None:  # noqa: ANN001
    db = request.getfixturevalue("postgres_database") if engine == "postgres" else None
    project = make_project(tmp_path / "proj", engine, db=db)
    proc = project.popen("pipeline", "backfill", project.name, *WINDOW, env=ENV)
    assert wait_for(lambda: _chunk_loaded(project), proc), proc.communicate()[1][-3000:]
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    rerun = project.cli("pipeline", "backfill", project.name, *WINDOW, env=ENV)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    total, distinct = project.query("SELECT count(*), count(DISTINCT id) FROM {ds}.items")[0]
    assert (total, distinct) == (ROWS, ROWS)
    ledger = project.ledger()
    assert [r for r in ledger if r[1] == "running"] == [], ledger
    assert sum(r[2] or 0 for r in ledger if r[1] == "completed") == ROWS, ledger
    assert sum(r[2] or 0 for r in ledger) == ROWS, ledger
    assert project.receipts_loaded() == ROWS
