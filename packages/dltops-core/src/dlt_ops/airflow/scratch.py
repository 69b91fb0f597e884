"""Worker hygiene for 0.1's ``cleanup_old_dlt_files`` task: remove ``dlt_*`` scratch entries
older than a threshold under one directory.

dlt-ops runs keep dlt's working state in the project, so they leave no scratch behind; the
sweep stays for deployments that still run dlt's own ``PipelineTasksGroup`` beside dlt-ops
(one ``dlt_*`` data folder per parse, by default in the system temp directory). Kept apart
from the task so it runs, and is tested, without Airflow.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import structlog

from dlt_ops.errors import UsageError

log = structlog.get_logger(__name__)

#: dlt's scratch names: ``dlt_<...>`` folders and files
SCRATCH_PATTERN = "dlt_*"


@dataclass(frozen=True)
class SweepResult:
    files: int
    dirs: int


class ScratchDirMissingError(UsageError, ValueError):
    """The directory to sweep does not exist (a ``ValueError``, as 0.1 raised)."""


def sweep_scratch(data_dir: str | Path | None = None, *, older_than: timedelta,
                  now: datetime | None = None) -> SweepResult:  # fmt: skip
    """Delete the ``dlt_*`` entries under ``data_dir`` (default: the system temp directory)
    last modified before ``now - older_than``; newer ones stay."""
    root = Path(data_dir) if data_dir is not None else Path(tempfile.gettempdir())
    if not root.is_dir():
        raise ScratchDirMissingError(
            f"{root} is not a directory: pass cleanup_data_dir= (or data_dir=) the folder "
            "dlt keeps its scratch data in"
        )
    cutoff = (now or datetime.now(UTC)) - older_than
    files = dirs = 0
    for entry in sorted(root.rglob(SCRATCH_PATTERN)):
        try:  # an entry inside a folder removed a moment ago is gone already
            modified = datetime.fromtimestamp(entry.lstat().st_mtime, tz=UTC)
        except FileNotFoundError:
            continue
        if modified >= cutoff:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
            dirs += 1
        else:
            entry.unlink(missing_ok=True)
            files += 1
    log.info("scratch swept", data_dir=str(root), files=files, dirs=dirs,
             cutoff=cutoff.isoformat())  # fmt: skip
    return SweepResult(files=files, dirs=dirs)
