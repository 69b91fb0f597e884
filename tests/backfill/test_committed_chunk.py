"""A backfill killed after a chunk's load committed: the chunk is not loaded again, and the
killed attempt's ledger row books what its load committed.

Three kill points, all after the chunk's load committed: right after dlt wrote the package to
``_dlt_loads`` (before its move to ``load/loaded``), once the package is in ``load/loaded``
(before or after the ledger row's finish, as it falls), and right after the row's ``completed``
finish (before its receipt and the backfill state said so). The re-run reclaims the chunk; the
killed attempt's row is ``completed`` with the rows its load committed (closed by the new attempt,
which writes its receipt and books nothing of them itself), the window is not extracted again,
so an ``append`` table holds each row once and receipts, completed ledger rows, the backfill
state and the table agree. A plain run of the source that finds the killed attempt first closes
it the same way, from the chunk's own working directory.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from dlt_ops.backfill.plan import BackfillPlan
from tests.faults._project import FaultProject, make_project, wait_for

ROWS, PAGES = 4000, 8  # rows n at 00:00 + n s: 3,600 in the first hourly chunk, 400 in the next
FIRST = 3600
FROM, TO = "2026-01-01T00:00:00Z", "2026-01-01T02:00:00Z"
WINDOW = ("--from", FROM, "--to", TO, "--chunk", "1h")
ENV = {"FT_ROWS": str(ROWS), "FT_PAGES": str(PAGES), "FT_PAGE_SLEEP": "0"}
KILLS = {"load committed": {"FT_AFTER_COMMIT": "kill"}, "loaded": {},
         "finished": {"FT_AFTER_FINISH": "kill"}}  # fmt: skip


def _chunk_loaded(project: FaultProject) -> bool:
    """A chunk's package sits in ``load/loaded`` of its own working directory."""
    try:
        found = project.root.glob(".dlt-ops/backfill/*/*/*/*/load/loaded/*")
        return next(found, None) is not None
    except OSError:
        return False


def _kill(project: FaultProject, point: str) -> None:
    proc = project.popen("pipeline", "backfill", project.name, *WINDOW, env={**ENV, **KILLS[point]})
    if point == "loaded":
        assert wait_for(lambda: _chunk_loaded(project), proc), proc.communicate()[1][-3000:]
        proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL, err[-3000:]


def _attempts(project: FaultProject, run_id: str) -> list[tuple]:
    return project.query(
        "SELECT status, records_loaded, note, error_summary FROM {ds}._dlt_ops_runs "
        f"WHERE run_id = '{run_id}' ORDER BY started_at"
    )


def _books_agree(project: FaultProject) -> int:
    """No row failed or running, and receipts = completed ledger rows = the table; its rows."""
    total = project.query("SELECT count(*) FROM {ds}.items")[0][0]
    ledger = project.ledger()
    assert [r for r in ledger if r[1] != "completed"] == [], ledger  # its data landed: no failed
    assert sum(r[2] or 0 for r in ledger) == total, ledger
    assert project.receipts_loaded() == total, ledger
    return total


@pytest.mark.parametrize("point", list(KILLS))
@pytest.mark.parametrize("engine", ["duckdb", "postgres"])
def test_a_chunk_killed_after_its_commit_loads_once(
    tmp_path: Path, request, engine: str, point: str
) -> None:  # noqa: ANN001
    db = request.getfixturevalue("postgres_database") if engine == "postgres" else None
    project = make_project(tmp_path / "proj", engine, db=db)
    _kill(project, point)
    rerun = project.cli("pipeline", "backfill", project.name, *WINDOW, env=ENV)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert project.query("SELECT count(DISTINCT id) FROM {ds}.items")[0][0] == ROWS
    assert _books_agree(project) == ROWS  # each row once
    plan = BackfillPlan.build(project.name, FROM, TO, "1h")
    shown = json.loads(project.cli("backfill", "show", plan.backfill_id, "--json").stdout)
    assert shown["records_loaded"] == ROWS, shown
    attempts = _attempts(project, plan.chunks[0].run_id)
    if point == "loaded" and len(attempts) == 1:
        return  # the kill fell after the chunk was recorded completed: nothing to reclaim
    assert len(attempts) == 2, attempts
    killed, new = attempts
    assert killed[:2] == ("completed", FIRST), attempts  # what its load committed, booked there
    assert new[:2] == ("completed", 0), attempts  # the window was not loaded nor booked again
    if point != "finished":  # closed by the re-run, which says so
        assert f"closed by run {plan.chunks[0].run_id}" in killed[2], killed
        assert "holder" in killed[2] and "abandoned the chunk" in killed[2], killed


@pytest.mark.parametrize("engine", ["duckdb", "postgres"])
def test_a_plain_run_closes_the_killed_chunk_attempt_from_its_chunk(
    tmp_path: Path, request, engine: str
) -> None:  # noqa: ANN001
    db = request.getfixturevalue("postgres_database") if engine == "postgres" else None
    project = make_project(tmp_path / "proj", engine, db=db)
    _kill(project, "load committed")
    # --wait: on PostgreSQL the dead backfill's source lease ends with its term (1.5 s here)
    wait = ("--wait-timeout", "60s")
    plain = project.cli("pipeline", "run", "-s", project.name, "-y", *wait, env=ENV)
    assert plain.returncode == 0, plain.stderr[-3000:]
    before = _books_agree(project)  # the plain run loads the source again: its own rows too
    plan = BackfillPlan.build(project.name, FROM, TO, "1h")
    (killed,) = _attempts(project, plan.chunks[0].run_id)
    assert killed[:2] == ("completed", FIRST), killed
    assert "is gone (found by run" in killed[2], killed
    rerun = project.cli("pipeline", "backfill", project.name, *WINDOW, env=ENV)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert _books_agree(project) == before + ROWS - FIRST  # the chunk is not loaded again
    assert [a[:2] for a in _attempts(project, plan.chunks[0].run_id)] == [
        ("completed", FIRST), ("completed", 0),
    ]  # fmt: skip
