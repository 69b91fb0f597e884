"""Schedules as cron: the seed's tags, and ``cron:<5 fields>`` where a user writes one.

A tag is a grouping key with a fixed cron materialization (UTC); ``@manual`` is never due.
The five-field form is the classic one (minute, hour, day of month, month, day of week; ``*``,
``a-b``, ``*/n``, ``a-b/n`` and lists), evaluated in UTC. When both day fields are restricted a
day matches either (as cron does).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from dlt_ops.errors import ConfigError

#: The cron each tag stands for (UTC). ``@weekly`` fires Monday 00:00: it closes the ISO week.
TAG_CRON: dict[str, str | None] = {
    "@hourly": "0 * * * *",
    "@2hourly": "0 */2 * * *",
    "@daily": "0 0 * * *",
    "@weekly": "0 0 * * 1",
    "@monthly": "0 0 1 * *",
    "@manual": None,
}
CRON_PREFIX = "cron:"
_FIELDS = (("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12),
           ("day of week", 0, 7))  # fmt: skip
#: How far back a previous fire time is searched (a 29 February schedule fits).
_HORIZON = timedelta(days=366 * 5)


def _field(text: str, name: str, low: int, high: int) -> frozenset[int]:
    values: set[int] = set()
    for part in text.split(","):
        body, _, step_text = part.partition("/")
        step = int(step_text) if step_text.isdigit() and int(step_text) > 0 else None
        if step_text and step is None:
            raise ValueError(f"bad step in {name} {part!r}")
        if body == "*":
            start, end = low, high
        elif "-" in body:
            a, _, b = body.partition("-")
            start, end = int(a), int(b)
        else:
            start = end = int(body)
            if step is not None:
                end = high
        if not (low <= start <= end <= high):
            raise ValueError(f"{name} {part!r} out of {low}-{high}")
        values.update(range(start, end + 1, step or 1))
    return frozenset(values)


@dataclass(frozen=True)
class Cron:
    """A parsed five-field cron expression (UTC)."""

    text: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday (7 folded onto 0)
    any_day: bool
    any_weekday: bool

    @classmethod
    def parse(cls, text: str) -> Cron:
        parts = text.split()
        if len(parts) != 5:
            raise ValueError(f"a cron expression has 5 fields, got {len(parts)}: {text!r}")
        sets = [_field(p, *spec) for p, spec in zip(parts, _FIELDS, strict=True)]
        weekdays = frozenset(d % 7 for d in sets[4])
        return cls(text, sets[0], sets[1], sets[2], sets[3], weekdays,
                   parts[2] == "*", parts[4] == "*")  # fmt: skip

    def _day_matches(self, day: datetime) -> bool:
        if day.month not in self.months:
            return False
        in_month = day.day in self.days
        in_week = (day.isoweekday() % 7) in self.weekdays
        if self.any_day and self.any_weekday:
            return True
        if self.any_day:
            return in_week
        if self.any_weekday:
            return in_month
        return in_month or in_week

    def previous(self, now: datetime) -> datetime | None:
        """The latest fire time at or before ``now`` (``None`` beyond the search horizon)."""
        now = now.astimezone(UTC).replace(second=0, microsecond=0)
        day = now.replace(hour=0, minute=0)
        stop = now - _HORIZON
        while day >= stop:
            if self._day_matches(day):
                for hour in sorted(self.hours, reverse=True):
                    for minute in sorted(self.minutes, reverse=True):
                        fire = day.replace(hour=hour, minute=minute)
                        if fire <= now:
                            return fire
            day -= timedelta(days=1)
        return None

    def next(self, now: datetime) -> datetime | None:
        """The first fire time strictly after ``now``."""
        now = now.astimezone(UTC).replace(second=0, microsecond=0)
        day = now.replace(hour=0, minute=0)
        stop = now + _HORIZON
        while day <= stop:
            if self._day_matches(day):
                for hour in sorted(self.hours):
                    for minute in sorted(self.minutes):
                        fire = day.replace(hour=hour, minute=minute)
                        if fire > now:
                            return fire
            day += timedelta(days=1)
        return None


def cron_text(schedule: str | None) -> str | None:
    """The cron a schedule stands for; ``None`` for ``@manual`` (never due).

    Raises ``ConfigError`` for a schedule that is neither a tag nor ``cron:<expr>``.
    """
    if schedule is None:
        return None
    if schedule in TAG_CRON:
        return TAG_CRON[schedule]
    if schedule.startswith(CRON_PREFIX):
        expression = schedule[len(CRON_PREFIX) :].strip()
        try:
            Cron.parse(expression)
        except ValueError as exc:
            raise ConfigError(f"invalid schedule {schedule!r}: {exc}") from None
        return expression
    valid = ", ".join([*TAG_CRON, "cron:<min hour dom month dow>"])
    raise ConfigError(f"invalid schedule {schedule!r}; one of: {valid}")


def is_valid_schedule(schedule: str | None) -> bool:
    """A tag, or ``cron:`` with a valid five-field expression."""
    try:
        cron_text(schedule)
    except ConfigError:
        return False
    return schedule is not None
