"""Freshness verdicts: is a source's last successful run recent enough, and did it miss a run?

Pure: :func:`freshness_of` takes a source's ledger rows, the project config and ``now``, and
reads nothing. The age is measured from the newest ``completed`` run's end (any trigger, any
resource scope, backfill chunks included). ``level`` is ``ok``, ``warn`` or ``error`` against
``[sources.<X>.dlt_ops] freshness``; ``unset`` when the source has no SLA. A source with an
SLA and no successful run is ``error``. ``missed_slot`` is a slot of the source's schedule that
went by with no run started after it (one whole schedule interval late), independent of the SLA.

**Overdue by schedule**: a scheduled source (not ``@manual``) whose newest success ended before
the slot preceding its last expected one (:class:`Slots`): a whole interval went by after the
last expected run should have landed. An ``@hourly`` source at 12:30 whose last success ended at
09:30 is overdue (it needed one ending at or after 11:00); one that never ran is not, nor one
that never succeeded until its runs go back past that slot.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from dlt_ops.ledger.model import RunRecord, RunStatus

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig
    from dlt_ops.config.freshness import FreshnessSLA


class FreshnessLevel(StrEnum):
    """A source's freshness against its SLA."""

    ok = "ok"
    warn = "warn"
    error = "error"
    unset = "unset"


@dataclass(frozen=True)
class Freshness:
    """One source's verdict at ``now``."""

    source: str
    level: FreshnessLevel
    sla: FreshnessSLA | None = None
    last_success: datetime | None = None
    age_s: float | None = None
    #: the slot that passed with no run started after it (``None``: none missed)
    missed_slot: datetime | None = None
    #: no success since the slot before the last expected one (scheduled sources only)
    overdue: bool = False
    #: where the schedule stands (``None``: no schedule, or ``@manual``)
    slots: Slots | None = None

    @property
    def stale(self) -> bool:
        """The SLA's error level is missed (``status --fail-on stale`` trips)."""
        return self.level is FreshnessLevel.error

    def as_json(self) -> dict[str, Any]:
        """The ``freshness`` object of ``pipeline status --json`` (no age: the document stays
        the same from one call to the next while the ledger does)."""
        return {
            "level": str(self.level),
            **(self.sla.as_json() if self.sla else {"warn_after_s": None, "error_after_s": None}),
            "last_success": self.last_success.isoformat() if self.last_success else None,
            "missed_slot": self.missed_slot.isoformat() if self.missed_slot else None,
        }

    def describe(self) -> str:
        """One line for people: the level, the age and the limit it is measured against."""
        if self.level is FreshnessLevel.unset:
            text = "no freshness SLA"
        elif self.last_success is None:
            text = f"{self.level}: no successful run"
        else:
            assert self.sla is not None  # a level other than unset has one
            limit = self.sla.error if self.level is FreshnessLevel.error else self.sla.warn
            text = f"{self.level}: last success {age_text(self.age_s or 0)} ago"
            if limit is not None and self.level is not FreshnessLevel.ok:
                text += f" (limit {age_text(limit.total_seconds())})"
        if self.missed_slot is not None:
            text += f"; missed the run due at {self.missed_slot.isoformat()}"
        return text


def age_text(seconds: float) -> str:
    """``2h 05m``, ``3d 4h``, ``40m``, ``12s``."""
    if seconds < 60:
        return f"{max(int(seconds), 0)}s"
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{minutes}m"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m" if hours < 48 else f"{hours // 24}d {hours % 24}h"


@dataclass(frozen=True)
class Slots:
    """Where a source's schedule stands at ``now``: its last expected slot, the next one, and
    the one before the last (a success must end after it, or the source is overdue)."""

    schedule: str
    cron: str
    timezone: str
    last: datetime | None
    next: datetime | None
    prior: datetime | None

    def as_json(self, overdue: bool | None) -> dict[str, Any]:
        """The ``schedule`` object of ``pipeline status --json`` (``overdue`` ``null``: the
        ledger could not be read)."""
        return {
            "schedule": self.schedule,
            "cron": self.cron,
            "timezone": self.timezone,
            "last_slot": self.last.isoformat() if self.last else None,
            "next_slot": self.next.isoformat() if self.next else None,
            "overdue": overdue,
        }

    def describe(self, overdue: bool | None) -> str:
        """``schedule @hourly: last slot 12:00, next 13:00 UTC; overdue``."""
        text = (f"schedule {self.schedule}: last slot {_slot_text(self.last)}, "
                f"next {_slot_text(self.next)} UTC")  # fmt: skip
        if overdue:
            text += f"; overdue: no success since the {_slot_text(self.prior)} slot"
        elif overdue is None:
            text += "; overdue unknown (ledger unreadable)"
        return text


def _slot_text(value: datetime | None) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M") if value else "never"


def slots_of(config: ProjectConfig, source: str, now: datetime) -> Slots | None:
    """The source's :class:`Slots`; ``None`` without a valid schedule or for ``@manual``."""
    from dlt_ops.cron import cron_of

    cfg = config.source(source)
    if not cfg.schedule_valid:
        return None
    cron = cron_of(cfg.schedule, cfg.timezone)
    if cron is None:
        return None
    fires = cron.previous_two(now)  # one walk: the last slot and the one before it
    last, prior = (fires + [None, None])[:2]
    return Slots(str(cfg.schedule), cron.text, cron.timezone, last, cron.next(now), prior)


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def last_success(runs: Iterable[RunRecord]) -> datetime | None:
    """The end of the newest completed run among ``runs``."""
    ends = [
        end
        for r in runs
        if r.status == RunStatus.completed and (end := _utc(r.completed_at)) is not None
    ]
    return max(ends, default=None)


def missed_slot(
    config: ProjectConfig, source: str, runs: Iterable[RunRecord], now: datetime
) -> datetime | None:
    """The slot before the latest one, when no run started at or after it (never-run sources
    and manual schedules miss nothing)."""
    return _missed(slots_of(config, source, now), runs)


def _missed(slots: Slots | None, runs: Iterable[RunRecord]) -> datetime | None:
    starts = [s for r in runs if (s := _utc(r.started_at)) is not None]
    prior = slots.prior if slots is not None else None
    return prior if prior is not None and starts and max(starts) < prior else None


def _overdue(slots: Slots | None, runs: list[RunRecord], success: datetime | None) -> bool:
    """No success ended at or after the slot before the last expected one (a source that never
    ran, or has no schedule, is not overdue; one that never succeeded is once its oldest run
    read started before that slot)."""
    if not runs or slots is None or slots.prior is None:
        return False
    if success is None:
        starts = [s for r in runs if (s := _utc(r.started_at)) is not None]
        return bool(starts) and min(starts) < slots.prior
    return success < slots.prior


def freshness_of(
    config: ProjectConfig, source: str, runs: Iterable[RunRecord], now: datetime
) -> Freshness:
    """The verdict of ``source`` from its ledger rows (``runs``: any order; they should hold
    its newest run and its newest completed run)."""
    runs = list(runs)
    sla = config.source(source).freshness
    success = last_success(runs)
    age = (now - success).total_seconds() if success is not None else None
    slots = slots_of(config, source, now)
    missed = _missed(slots, runs)
    overdue = _overdue(slots, runs, success)
    if sla is None:
        level = FreshnessLevel.unset
    elif age is None:  # never succeeded: the worst level the SLA has
        level = FreshnessLevel.error if sla.error is not None else FreshnessLevel.warn
    elif sla.error is not None and age >= sla.error.total_seconds():
        level = FreshnessLevel.error
    elif sla.warn is not None and age >= sla.warn.total_seconds():
        level = FreshnessLevel.warn
    else:
        level = FreshnessLevel.ok
    return Freshness(source, level, sla, success, age, missed, overdue, slots)
