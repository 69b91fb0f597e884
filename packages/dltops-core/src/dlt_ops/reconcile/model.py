"""What ``reconcile`` finds: one finding per drifted column, grouped per source."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from dlt_ops.errors import ConfigError


class DriftKind(StrEnum):
    """How a column drifted from the resource's declared model."""

    #: live in the destination, not declared by the model
    additive = "additive"
    #: declared, but its non-null share collapsed in the recent window (``--include-removal``)
    removal = "removal"
    #: declared, but the destination's type no longer matches the model's
    type = "type"
    #: declared, but the table has no such column
    missing = "missing"


@dataclass(frozen=True)
class DriftFinding:
    """One drifted column of one table dlt created for a resource."""

    source: str
    resource: str
    table: str
    column: str
    kind: DriftKind
    #: what was found, e.g. ``bigint → text`` or ``non-null 95% → 0%``
    detail: str = ""
    #: SQL (in the destination's dialect) that returns the drifted rows; ``None`` when no
    #: row can show it (a missing column)
    reproduce_sql: str | None = None
    first_seen_at: datetime | None = None
    last_seen_at: datetime | None = None
    acknowledged_at: datetime | None = None
    #: first seen by this reconcile (it is what gets alerted)
    new: bool = False

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What identifies a finding across reconciles."""
        return (self.source, self.table, self.column, str(self.kind))

    def as_json(self) -> dict[str, Any]:
        """JSON-ready dict, timestamps ISO-8601."""
        out: dict[str, Any] = {}
        for key in self.__dataclass_fields__:
            value = getattr(self, key)
            out[key] = value.isoformat() if isinstance(value, datetime) else value
        return out


@dataclass
class SourceReport:
    """One source's reconcile: its findings, notes (skips), or the error that stopped it."""

    source: str
    findings: list[DriftFinding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    duration_s: float = 0.0

    @property
    def open_findings(self) -> list[DriftFinding]:
        """Findings nobody acknowledged (what ``--fail-on drift`` counts)."""
        return [f for f in self.findings if f.acknowledged_at is None]

    def as_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {
            "source": self.source,
            "error": self.error,
            "notes": list(self.notes),
            "duration_s": round(self.duration_s, 3),
            "findings": [f.as_json() for f in self.findings],
        }


@dataclass(frozen=True)
class RemovalSettings:
    """Removal-drift thresholds: a column flags when its non-null share was above
    ``baseline_threshold`` in the baseline window and is below ``recent_threshold`` in the
    recent one."""

    baseline_threshold: float = 0.20
    recent_threshold: float = 0.01
    recent_window_hours: float = 6.0
    baseline_window_days: float = 7.0

    @classmethod
    def merged(cls, *tables: Mapping[str, Any]) -> RemovalSettings:
        """Defaults, overridden by each of ``tables`` in turn (project, then source)."""
        values: dict[str, float] = {}
        for table in tables:
            for key, value in (table or {}).items():
                if key not in cls.__dataclass_fields__:
                    known = ", ".join(cls.__dataclass_fields__)
                    raise ConfigError(
                        f"[..reconcile] {key!r} is not a setting; use one of: {known}."
                    )
                if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                    raise ConfigError(
                        f"[..reconcile] {key} must be a positive number, got {value!r}."
                    )
                values[key] = float(value)
        return cls(**values)
