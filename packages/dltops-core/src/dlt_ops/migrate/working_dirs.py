"""dlt's working directories of a 0.1 project, moved into the project.

0.1 ran its pipelines in dlt's global pipelines directory (``~/.dlt/pipelines/<pipeline>``, or
under ``DLT_DATA_DIR``); this version keeps them in the project, keyed by destination and
dataset (:func:`dlt_ops.runner.pipeline.working_base`). A 0.1 working directory carries local
state and any load package 0.1 left pending, so it is moved — not copied, so two versions never
both load its packages — when it belongs to the source's dataset and the project has none yet.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from dlt_ops.migrate.model import Change


@dataclass(frozen=True)
class Move:
    """One working directory to adopt."""

    source: str
    old: Path
    new: Path
    pending: int

    def change(self) -> Change:
        packages = f", {self.pending} pending load package(s)" if self.pending else ""
        return Change("working dir", self.source, f"move {self.old} to {self.new}{packages}")


def dlt_pipelines_dir() -> Path:
    """Where dlt (and so 0.1) keeps working directories for this user."""
    from dlt.common.pipeline import get_dlt_pipelines_dir

    return Path(get_dlt_pipelines_dir())


def _dataset(state: Path) -> str | None:
    try:
        value = json.loads(state.read_text(encoding="utf-8")).get("dataset_name")
    except (OSError, ValueError):
        return None
    return value if isinstance(value, str) else None


def _pending(working_dir: Path) -> int:
    normalized = working_dir / "load" / "normalized"
    extracted = working_dir / "normalize"
    return sum(1 for d in (normalized, extracted) if d.is_dir() for _ in d.iterdir())


def planned_move(source: str, pipeline: str, dataset: str, new_base: Path, old_base: Path
                 ) -> Move | None:  # fmt: skip
    """The move of ``source``'s 0.1 working directory, if there is one to make."""
    old, new = old_base / pipeline, new_base / pipeline
    if (
        new.exists()
        or not (old / "state.json").is_file()
        or _dataset(old / "state.json") != dataset
    ):
        return None
    return Move(source, old, new, _pending(old))


def apply(move: Move) -> None:
    """Move the directory (a rename when both sides share a file system)."""
    move.new.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(move.old), str(move.new))
