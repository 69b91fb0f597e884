"""A backfill killed after a chunk's load committed: the chunk is not loaded again, and the
killed attempt's ledger row books what its load committed.

Three kill points, all after the chunk's load committed: right after dlt wrote the package to
``_dlt_loads`` (before its move to ``load/loaded``), once the package is in ``load/loaded``
(before or after the ledger row's finish, as it falls), and right after the row's ``completed``
finish (before its receipt and the backfill state said so). The re-run reclaims the chunk; the
killed attempt's row is ``completed`` with the rows its load committed (closed by the new attempt,
which writes its receipt and books nothing of them itself), the window is not extracted again,
so an ``append`` table holds each row once and receipts, completed ledger rows, the backfill
state and the table agree.
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
    total, distinct = project.query("SELECT count(*), count(DISTINCT id) FROM {ds}.items")[0]
    assert (total, distinct) == (ROWS, ROWS)
    ledger = project.ledger()
    assert [r for r in ledger if r[1] != "completed"] == [], ledger  # its data landed: no failed
    assert sum(r[2] or 0 for r in ledger) == ROWS, ledger
    assert project.receipts_loaded() == ROWS
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
