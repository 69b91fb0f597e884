"""Repairing a dlt working directory that a killed run left between two steps of a commit.

dlt's normalize step commits a package in two moves: it renames ``load/new/<id>`` to
``load/normalized/<id>`` (atomic), then deletes the extracted copy ``normalize/extracted/<id>``.
A process killed between the two leaves the package in both places, and every later run fails:
normalize tries to commit it again and dlt stops with ``Directory not empty``. The normalized
copy is complete (the rename is atomic), so the extracted copy is the leftover: remove it, and
any ``load/new/<id>`` left by such a failed retry, and say so. Nothing is loaded twice: the
normalized package is loaded once, by the next load step.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from dlt_ops.log import get_logger

log = get_logger(__name__)


def _ids(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if p.is_dir()} if folder.is_dir() else set()


def repair_interrupted_commits(working_dir: Path) -> list[str]:
    """Drop the leftovers of normalize commits a killed run interrupted; return their ids."""
    committed = _ids(working_dir / "load" / "normalized") | _ids(working_dir / "load" / "loaded")
    repaired: list[str] = []
    for folder in (working_dir / "normalize" / "extracted", working_dir / "load" / "new"):
        for load_id in sorted(_ids(folder) & committed):
            shutil.rmtree(folder / load_id)
            repaired.append(load_id)
            log.warning(
                "working_dir.repaired",
                load_id=load_id,
                removed=str(folder / load_id),
                reason="a run was killed after dlt committed the normalized package but before "
                "it removed this copy; the committed package is kept and loads once",
            )
    return sorted(set(repaired))


#: Backfill chunk runs' working directories live here, one per chunk (never shared).
BACKFILL_WORKDIR = Path(".dlt-ops") / "backfill"


def chunk_working_dir(root: Path, dataset: str, backfill_id: str, run_id: str) -> Path:
    """A backfill chunk run's own dlt working directory (its pipeline's folder below it): keyed
    by dataset, plan and the chunk's ``run_id``, so a later run can find what a dead attempt of
    the chunk left there."""
    return root / BACKFILL_WORKDIR / dataset / backfill_id / run_id


#: What a pipeline's working dir holds of its own state: the rest is packages and traces
_STATE_PARTS = ("state.json", "schemas")


def seed_from_sibling(working_dir: Path, sibling: Path) -> bool:
    """Start a *new* working dir from a sibling's state and schemas; ``True`` when seeded.

    A backfill runs its chunks one after another, each in its own working dir; the previous
    chunk's dir holds exactly what it just loaded (its state and schemas are the destination's
    as of that load), so copying them is what restoring from the destination would give,
    without two queries and a connection per chunk. A dir that exists already (a retried
    chunk's pending package) is never touched: that run restores from the destination.
    """
    if working_dir.exists() or not (sibling / "state.json").is_file():
        return False
    staging = working_dir.with_name(working_dir.name + ".seeding")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for part in _STATE_PARTS:
        source = sibling / part
        if source.is_dir():
            shutil.copytree(source, staging / part)
        elif source.is_file():
            shutil.copy2(source, staging / part)
    staging.rename(working_dir)  # all or nothing: a half-copied dir is never used
    log.debug("working_dir.seeded", working_dir=str(working_dir), sibling=str(sibling))
    return True
