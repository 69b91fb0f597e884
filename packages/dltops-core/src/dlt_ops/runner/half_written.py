"""A working directory an earlier run left half-written, and the way out (``--drop-pending``).

dlt keeps each pending load package as a folder with its ``schema.json``; a package folder
without one (a run killed while writing it, a disk that filled up, a hand-edited directory)
cannot be normalized or loaded, and dlt fails on it in every later run. Such a run stops before
extracting and says what it found and how to recover.

``--drop-pending`` is the recovery: the pipeline's local working directory is removed whole —
pending packages and the local dlt state that already counted them — so the run starts as on a
fresh machine, with the state (incremental cursors) dlt stored in the destination at the last
load. Rows of the dropped packages never reached the destination; they are extracted again.
The drop is written in the run's ledger row, and the rows of the runs that left the packages
are closed if they still say ``running``.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from dlt_ops.errors import DltOpsError
from dlt_ops.log import get_logger
from dlt_ops.runner.packages import PackageBook

log = get_logger(__name__)

SCHEMA_FILE = "schema.json"
#: Where dlt keeps pending packages inside a pipeline's working directory.
PACKAGE_FOLDERS = ("normalize/extracted", "load/new", "load/normalized")


class HalfWrittenWorkingDirError(DltOpsError):
    """The working directory holds a package dlt cannot read; ``--drop-pending`` recovers."""

    exit_code = 1


@dataclass(frozen=True)
class Dropped:
    """What ``--drop-pending`` removed: package ids and the runs that had left them."""

    load_ids: tuple[str, ...]
    runs: tuple[str, ...]

    def note(self, run_id: str) -> str:
        """The ledger's words for it."""
        ids = ", ".join(self.load_ids) or "none"
        by = f" (left by run(s) {', '.join(self.runs)})" if self.runs else ""
        return (
            f"drop-pending: run {run_id} dropped the local working state and its pending "
            f"package(s) {ids}{by}; state was restored from the destination"
        )


def pending_packages(working_dir: Path) -> dict[str, Path]:
    """Every pending package folder by load id."""
    found: dict[str, Path] = {}
    for folder in PACKAGE_FOLDERS:
        base = working_dir / folder
        if base.is_dir():
            found.update({p.name: p for p in sorted(base.iterdir()) if p.is_dir()})
    return found


def half_written(working_dir: Path) -> list[Path]:
    """Pending package folders without a ``schema.json``."""
    return [p for p in pending_packages(working_dir).values() if not (p / SCHEMA_FILE).is_file()]


def check_working_dir(working_dir: Path, *, drop: bool) -> Dropped | None:
    """Refuse a half-written working dir, or (``drop``) remove the working dir whole.

    Returns what was dropped, ``None`` when nothing was.
    """
    if drop:
        return _drop(working_dir)
    broken = half_written(working_dir)
    if broken:
        listed = ", ".join(str(p.relative_to(working_dir)) for p in broken)
        raise HalfWrittenWorkingDirError(
            f"the dlt working directory {working_dir} holds a load package an earlier run left "
            f"half-written ({listed}: no {SCHEMA_FILE}); dlt cannot load it. Re-run with "
            "--drop-pending to drop the local pending packages (their rows were never loaded "
            "and are extracted again from the state stored in the destination)."
        )
    return None


def _drop(working_dir: Path) -> Dropped | None:
    if not working_dir.exists():
        return None
    packages = pending_packages(working_dir)
    book = PackageBook(working_dir)
    runs = sorted({r for lid in packages if (r := book.origin(lid).run_id) is not None})
    shutil.rmtree(working_dir)
    dropped = Dropped(tuple(sorted(packages)), tuple(runs))
    log.warning("working_dir.dropped", path=str(working_dir), load_ids=list(dropped.load_ids),
                runs=list(dropped.runs))  # fmt: skip
    return dropped
