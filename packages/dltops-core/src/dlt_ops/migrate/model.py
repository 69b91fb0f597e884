"""What ``migrate`` found: one change per line, automatic (``--apply`` does it) or by hand."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Change:
    """One difference between the 0.1 project and what this version reads."""

    area: str  # "config", "table" or "working dir"
    subject: str  # the key, table or directory
    what: str  # one line: what changes (or what to do by hand)
    automatic: bool = True

    def as_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"area": self.area, "subject": self.subject, "what": self.what,
                "automatic": self.automatic}  # fmt: skip


@dataclass
class MigrationPlan:
    """Every change for the project at ``root``; ``applied`` once ``--apply`` ran."""

    root: Path
    changes: list[Change] = field(default_factory=list)
    applied: bool = False

    @property
    def manual(self) -> list[Change]:
        """Changes ``--apply`` cannot make."""
        return [c for c in self.changes if not c.automatic]

    def lines(self) -> list[str]:
        """The human rendering."""
        if not self.changes:
            return [f"Nothing to migrate: {self.root} reads as a project of this version."]
        verb = "Changed" if self.applied else "Will change (with --apply)"
        out: list[str] = []
        auto = [c for c in self.changes if c.automatic]
        if auto:
            out.append(f"{verb}:")
            out += [f"  {c.area:<12} {c.subject}: {c.what}" for c in auto]
        if self.manual:
            out.append("By hand (--apply does not do these):")
            out += [f"  {c.area:<12} {c.subject}: {c.what}" for c in self.manual]
        if not self.applied and auto:
            out.append("Run `dlt-ops migrate --apply` to make the changes above.")
        return out

    def as_json(self) -> dict[str, Any]:
        """The ``--json`` document."""
        return {"root": str(self.root), "applied": self.applied,
                "changes": [c.as_json() for c in self.changes]}  # fmt: skip
