"""A file a filesystem reader could not parse, as the run books it (see ``runner/bad_files``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class BadFile:
    """One file a reader could not parse, and what became of it."""

    resource: str
    file: str
    line: int | None
    error: str
    quarantined: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The receipt's form."""
        return {"file": self.file, "line": self.line, "error": self.error,
                "quarantined": self.quarantined}  # fmt: skip


def skipped_files_text(bad: list[BadFile]) -> str | None:
    """The receipt's ``skipped_files``: a JSON list, ``None`` when none."""
    return json.dumps([b.as_json() for b in bad], separators=(",", ":")) if bad else None
