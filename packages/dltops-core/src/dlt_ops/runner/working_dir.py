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

import structlog

log = structlog.get_logger(__name__)


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
