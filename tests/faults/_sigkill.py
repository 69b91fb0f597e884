"""SIGKILL a run at a random point — mid-extract, anywhere from the end of the extract through
normalize and load, right after the load committed — then re-run it: every row lands exactly
once; the receipts' loaded rows, the ledger's loaded counts over completed runs and the table
all agree; no ledger row is left ``running`` and none that booked rows says ``failed``.

Plain and ``@with_checkpoints`` runs, DuckDB (``test_sigkill_duckdb.py``) and PostgreSQL
(``test_sigkill_postgres.py``): one test file per engine, so pytest-xdist's ``--dist loadfile``
runs the two halves of this slowest family on two workers. Kill points come from a seeded
generator (``FAULTS_SEED``), so CI repeats the same trials.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ._project import (
    FaultProject,
    has_committed_job,
    has_loaded_package,
    has_normalized_package,
    make_project,
    wait_for,
    wait_for_line,
)

ROWS, PAGES = 4000, 8
TRIALS = 6  # per engine and variant: 24 trials here, plus the backfill chunk family


NORMALIZED = "normalized"  # dlt moved the package to load/normalized: the load is next
COMMITTED = "committed"  # the table's job committed; dlt has not recorded the package loaded
LOAD_COMMITTED = "load committed"  # in _dlt_loads; dlt's move to load/loaded is next (in-process)
LOADED = "loaded"  # dlt finished the load: the ledger's finish write is next
KINDS = ("page", "extracted", NORMALIZED, COMMITTED, LOAD_COMMITTED, LOADED)


def _kill_point(rng, k: int) -> tuple[str, float]:  # noqa: ANN001
    """``page k`` (mid-extract), ``extracted`` plus a delay into normalize/load, the moment
    the package is normalized (mid-load), the moment its job committed, the moment its load
    committed (the run kills itself right after dlt wrote ``_dlt_loads``, before it records
    the package as loaded), or the moment it is loaded (before the ledger's finish); each
    trial set covers all six."""
    kind = KINDS[k % len(KINDS)]
    if kind == "page":
        return f"page {rng.randrange(1, PAGES - 1)}", 0.0
    if kind in (NORMALIZED, COMMITTED, LOAD_COMMITTED, LOADED):
        return kind, 0.0
    return "extracted", rng.uniform(0.0, 0.6)


def _trial(project: FaultProject, k: int, point: tuple[str, float]) -> str:
    progress = project.root / f"progress-{k}.txt"
    env = {"FT_ROWS": str(ROWS), "FT_PAGES": str(PAGES), "FT_PROGRESS": str(progress)}
    if point[0] == LOAD_COMMITTED:
        env["FT_AFTER_COMMIT"] = "kill"
    proc = project.popen("pipeline", "run", "-s", project.name, "-y", env=env)
    if point[0] == LOAD_COMMITTED:
        proc.communicate(timeout=120)
        return "killed" if proc.returncode == -signal.SIGKILL else "finished first"
    if point[0] == NORMALIZED:
        reached = wait_for(lambda: has_normalized_package(project), proc)
    elif point[0] == COMMITTED:
        reached = wait_for(lambda: has_committed_job(project), proc)
    elif point[0] == LOADED:
        reached = wait_for(lambda: has_loaded_package(project), proc)
    else:
        reached = wait_for_line(progress, point[0], proc)
    kill_at = time.monotonic() + point[1]
    while reached and time.monotonic() < kill_at and proc.poll() is None:
        time.sleep(0.01)  # bounded: the trial's own kill delay, not a wait for a result
    outcome = "finished first"
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
        outcome = "killed"
    proc.communicate(timeout=120)
    return outcome


def _skipped_by_design(project: FaultProject) -> int:
    """Rows a resume will not fetch again: those below the furthest active checkpoint (minus
    its 1 s overlap) of an extract that died — the documented trade of ``@with_checkpoints``
    (docs/checkpoints.md, "What a checkpoint claims"). Rows ``n`` have ``at = T0 + n s``."""
    if not project.table_exists("_dlt_custom_checkpoints"):
        return 0
    values = project.query(
        "SELECT checkpoint_value FROM {ds}._dlt_custom_checkpoints WHERE status = 'active'"
    )
    if not values:
        return 0
    from datetime import UTC, datetime

    furthest = max(datetime.fromisoformat(v) for (v,) in values)
    resume_at = (furthest - datetime(2026, 1, 1, tzinfo=UTC)).total_seconds() - 1
    return max(int(resume_at), 0)


def _verify(project: FaultProject, figures) -> None:  # noqa: ANN001
    skipped = _skipped_by_design(project)
    rerun = project.cli("pipeline", "run", "-s", project.name, "-y", env={"FT_ROWS": str(ROWS)})
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    total, distinct = project.query("SELECT count(*), count(DISTINCT id) FROM {ds}.items")[0]
    figures.add(expected=ROWS - skipped, loaded=total, distinct=distinct)
    if skipped:
        figures.notes.append(f"{skipped} rows below a checkpoint skipped by design")
        below = project.query(f"SELECT count(*) FROM {{ds}}.items WHERE id < {skipped}")[0][0]
        assert below == 0, "a resume fetched rows below its checkpoint"
    ledger = project.ledger()
    assert [r for r in ledger if r[1] == "running"] == [], ledger
    booked = sum(r[2] or 0 for r in ledger)  # a dead run's row books what its load committed
    assert booked == total, f"ledger books {booked} rows, the table holds {total}: {ledger}"
    completed = sum(r[2] or 0 for r in ledger if r[1] == "completed")
    assert completed == total, f"completed runs book {completed} rows of {total}: {ledger}"
    receipts = project.receipts_loaded()
    assert receipts == total, f"receipts book {receipts} rows, the table holds {total}: {ledger}"


def run_trials(tmp_path: Path, request, rng, figures, engine: str, checkpointed: bool) -> None:  # noqa: ANN001
    """``TRIALS`` kill-and-rerun trials of one engine and variant, each on a fresh project
    (and, on PostgreSQL, a fresh database), summed into ``figures``."""
    outcomes = []
    for k in range(TRIALS):
        db = request.getfixturevalue("postgres_database") if engine == "postgres" else None
        if db is not None and k:  # a fresh database per trial
            db = request.getfixturevalue("postgres_server").create_database()
        project = make_project(tmp_path / f"t{k}", engine, checkpointed=checkpointed, db=db)
        point = _kill_point(rng, k)
        outcomes.append(f"{point[0]}+{point[1]:.2f}s: {_trial(project, k, point)}")
        _verify(project, figures)
    figures.notes.append(", ".join(outcomes))
    figures.check()


def sigkill_test(engine: str) -> Callable[..., None]:
    """The family's test on one engine: its plain and its checkpointed scenario, ids
    ``<engine>-plain`` and ``<engine>-checkpointed``."""

    @pytest.mark.parametrize("checkpointed", [False, True], ids=["plain", "checkpointed"])
    @pytest.mark.parametrize("engine", [engine])
    def test_sigkill_then_rerun(
        tmp_path: Path, request, rng, figures, engine, checkpointed
    ) -> None:  # noqa: ANN001
        run_trials(tmp_path, request, rng, figures, engine, checkpointed)

    return test_sigkill_then_rerun
