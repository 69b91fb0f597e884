"""The disk fills up right after a backfill chunk's load committed: its rows land once.

dlt commits a package's load (its row in ``_dlt_loads``), then writes the package's completion
marker and moves it to ``load/loaded``. Here the project's ``.dlt-ops/`` is a small tmpfs that
the run itself fills at that moment (``FT_AFTER_COMMIT``), so dlt's marker write fails with
ENOSPC while the data is in the destination. The chunk must be booked as loaded — not failed,
and never loaded again by a retry — on an append table, where a second load would double it.
The next chunk then fails on the full disk; the disk is freed and the backfill resumed.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ._project import FaultProject, make_project

ROWS, PAGES = 4000, 8  # rows n at 00:00 + n s: 3,600 in the first hourly chunk, 400 in the next
WINDOW = ("--from", "2026-01-01T00:00:00Z", "--to", "2026-01-01T02:00:00Z", "--chunk", "1h")
TMPFS_SIZE = "16m"
TRIALS = 1  # per engine: one backfill whose first chunk meets the full disk, then a resume


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 16 MB tmpfs mounted where the project keeps ``.dlt-ops/``."""
    state = tmp_path / "proj" / ".dlt-ops"
    state.mkdir(parents=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE}", "tmpfs", str(state)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if mounted.returncode != 0:
        why = f"cannot mount a tmpfs (needs root): {mounted.stderr.strip() or mounted.returncode}"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    try:
        yield state
    finally:
        subprocess.run(["umount", "-l", str(state)], capture_output=True, check=False)


def _backfill(project: FaultProject, **env: str) -> subprocess.CompletedProcess[str]:
    rows = {"FT_ROWS": str(ROWS), "FT_PAGES": str(PAGES), "FT_PAGE_SLEEP": "0"}
    return project.cli("pipeline", "backfill", project.name, *WINDOW, env={**rows, **env})


@pytest.mark.parametrize("engine", ["duckdb", "postgres"])
def test_full_disk_after_commit(tmp_path: Path, request, small_disk: Path, figures, engine) -> None:  # noqa: ANN001
    db = request.getfixturevalue("postgres_database") if engine == "postgres" else None
    project = make_project(tmp_path / "proj", engine, db=db)
    first = _backfill(project, FT_AFTER_COMMIT=f"fill:{small_disk}")
    assert (small_disk / "filler").exists(), "the disk was never filled: " + first.stderr[-2000:]
    (small_disk / "filler").unlink()  # the operator frees the disk
    resumed = _backfill(project)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    total, distinct = project.query("SELECT count(*), count(DISTINCT id) FROM {ds}.items")[0]
    figures.add(expected=ROWS, loaded=total, distinct=distinct)
    figures.notes.append(f"disk full after the first chunk's commit: backfill exit "
                         f"{first.returncode}; resumed: exit {resumed.returncode}")  # fmt: skip
    figures.check()  # each row once
    ledger = project.ledger()
    assert [r for r in ledger if r[1] == "running"] == [], ledger
    completed = sum(r[2] or 0 for r in ledger if r[1] == "completed")
    assert completed == total, f"completed runs book {completed} rows of {total}: {ledger}"
    assert sum(r[2] or 0 for r in ledger) == total, ledger
    receipts = project.receipts_loaded()
    assert receipts == total, f"receipts book {receipts} rows, the table holds {total}"
