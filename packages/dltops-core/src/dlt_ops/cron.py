"""Schedules as cron: the seed's tags, and ``cron:<5 fields> [<zone>]`` where a user writes one.

A tag is a grouping key with a fixed cron materialization; ``@manual`` is never due. The five
fields are the classic ones (minute, hour, day of month, month, day of week), evaluated by
croniter (imported on first evaluation: ``dlt-ops --help`` never loads it) in the schedule's
IANA time zone, UTC when none is given. When both day fields are restricted a day matches
either (as cron does).

Daylight-saving time is handled as cron does (Debian's ``cron(8)``): a fixed-time entry (no
``*`` in its minute or hour field) whose wall time is skipped when clocks go forward runs once,
right after the jump; one whose wall time repeats when clocks go back runs once, at its first
occurrence. An entry with a wildcard minute or hour follows the clock as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from functools import cached_property, lru_cache
from typing import Any

from dlt_ops.errors import ConfigError

#: The cron each tag stands for. ``@weekly`` fires Monday 00:00: it closes the ISO week.
TAG_CRON: dict[str, str | None] = {
    "@hourly": "0 * * * *",
    "@2hourly": "0 */2 * * *",
    "@daily": "0 0 * * *",
    "@weekly": "0 0 * * 1",
    "@monthly": "0 0 1 * *",
    "@manual": None,
}
CRON_PREFIX = "cron:"
DEFAULT_ZONE = "UTC"
#: Fire times looked at past the first before giving up (skipped repeats, one per DST change).
_TRIES = 8


def zone_of(name: str) -> tzinfo:
    """The IANA time zone ``name`` (``ValueError`` naming it when there is none such)."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if name == DEFAULT_ZONE:
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"unknown time zone {name!r} (an IANA name such as 'Europe/Berlin' or 'UTC')"
        ) from None


def is_valid_zone(name: object) -> bool:
    """``name`` is a string naming an IANA time zone."""
    if not isinstance(name, str):
        return False
    try:
        zone_of(name)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Cron:
    """A parsed five-field cron expression in a time zone; fire times come back in UTC."""

    text: str
    timezone: str = DEFAULT_ZONE

    @classmethod
    def parse(cls, text: str, timezone: str | None = None) -> Cron:
        """Check ``text`` (five fields) and ``timezone``; ``ValueError`` says what is wrong."""
        from croniter import CroniterError, croniter

        parts = text.split()
        if len(parts) != 5:
            raise ValueError(f"a cron expression has 5 fields, got {len(parts)}: {text!r}")
        zone = timezone or DEFAULT_ZONE
        zone_of(zone)
        expression = " ".join(parts)
        try:
            croniter(expression)
        except CroniterError as exc:  # croniter's own words name the field and value
            raise ValueError(str(exc)) from None
        return cls(expression, zone)

    @cached_property
    def _zone(self) -> tzinfo:
        return zone_of(self.timezone)

    @property
    def fixed_time(self) -> bool:
        """No wildcard in the minute or hour field: cron's DST rules apply."""
        minute, hour = self.text.split()[:2]
        return "*" not in minute and "*" not in hour

    def _repeat(self, fire: datetime) -> bool:
        """``fire`` is the second occurrence of a wall time that repeats as clocks go back."""
        local = fire.astimezone(self._zone)
        if not local.fold:
            return False
        return local.replace(fold=0).utcoffset() != local.utcoffset()

    def _walk(self, start: datetime, forward: bool, count: int = 1) -> list[datetime]:
        """Up to ``count`` fire times from ``start``; remembered, since a fleet's sources share
        a few schedules and a pass asks each at the same minute (1,000 walks were ~0.5 s)."""
        return list(_walk_of(self, start, forward, count))

    def _walk_now(self, start: datetime, forward: bool, count: int) -> tuple[datetime, ...]:
        """:meth:`_walk`, computed (one croniter: its expansion is the cost)."""
        from croniter import CroniterBadDateError, croniter

        it: Any = croniter(self.text, start.astimezone(self._zone))
        step = it.get_next if forward else it.get_prev
        found: list[datetime] = []
        try:
            for _ in range(_TRIES * count):
                fire: datetime = step(datetime).astimezone(UTC)
                if not (self.fixed_time and self._repeat(fire)):
                    found.append(fire)
                    if len(found) == count:
                        break
        except CroniterBadDateError:  # a day that never comes (30 February)
            pass
        return tuple(found)

    def previous(self, now: datetime) -> datetime | None:
        """The latest fire time at or before ``now`` (``None`` when it never fires)."""
        found = self.previous_two(now, count=1)
        return found[0] if found else None

    def previous_two(self, now: datetime, *, count: int = 2) -> list[datetime]:
        """The latest fire time at or before ``now`` and the one before it, in one walk (fewer
        when it fires less)."""
        # croniter's previous is strictly before its start: start a second past the minute
        start = now.astimezone(UTC).replace(second=0, microsecond=0) + timedelta(seconds=1)
        return self._walk(start, forward=False, count=count)

    def next(self, now: datetime) -> datetime | None:
        """The first fire time strictly after ``now``."""
        start = now.astimezone(UTC).replace(second=0, microsecond=0)
        found = self._walk(start, forward=True)
        return found[0] if found else None


@lru_cache(maxsize=4096)  # pure: a Cron is frozen and ``start`` an aware instant
def _walk_of(cron: Cron, start: datetime, forward: bool, count: int) -> tuple[datetime, ...]:
    return cron._walk_now(start, forward, count)


@lru_cache(maxsize=4096)  # pure, and croniter's parse is ~0.5 ms: status asks per source
def split_schedule(schedule: str) -> tuple[str | None, str | None]:
    """A schedule's five-field cron and its inline time zone (``None`` when it has none);
    the cron is ``None`` for ``@manual``. Raises ``ConfigError`` for a schedule that is neither
    a tag nor ``cron:<expr> [<zone>]``."""
    if schedule in TAG_CRON:
        return TAG_CRON[schedule], None
    if schedule.startswith(CRON_PREFIX):
        parts = schedule[len(CRON_PREFIX) :].split()
        # a sixth word is a zone when it has letters (never a cron field of digits and */-,)
        zone = parts.pop() if len(parts) == 6 and any(c.isalpha() for c in parts[-1]) else None
        expression = " ".join(parts)
        try:
            Cron.parse(expression, zone)
        except ValueError as exc:
            raise ConfigError(f"invalid schedule {schedule!r}: {exc}") from None
        return expression, zone
    valid = ", ".join([*TAG_CRON, "cron:<min hour dom month dow> [<time zone>]"])
    raise ConfigError(f"invalid schedule {schedule!r}; one of: {valid}")


def cron_text(schedule: str | None) -> str | None:
    """The five-field cron a schedule stands for (its zone left out); ``None`` for
    ``@manual`` (never due). Raises ``ConfigError`` for an invalid schedule."""
    if schedule is None:
        return None
    return split_schedule(schedule)[0]


def schedule_zone(schedule: str, timezone: str | None = None) -> str:
    """The zone ``schedule`` is evaluated in: its inline zone, else ``timezone`` (the source's
    ``timezone`` key), else UTC. Both, naming different zones: ``ConfigError``."""
    _, inline = split_schedule(schedule)
    if inline and timezone and inline != timezone:
        raise ConfigError(
            f"schedule {schedule!r} names time zone {inline!r} but the source's timezone is "
            f"{timezone!r}; keep one of them."
        )
    zone = inline or timezone or DEFAULT_ZONE
    try:
        zone_of(zone)
    except ValueError as exc:
        raise ConfigError(f"invalid timezone for schedule {schedule!r}: {exc}") from None
    return zone


def cron_of(schedule: str | None, timezone: str | None = None) -> Cron | None:
    """The schedule as a :class:`Cron` in its zone; ``None`` for none or ``@manual``."""
    if schedule is None:
        return None
    text = cron_text(schedule)
    return Cron(text, schedule_zone(schedule, timezone)) if text is not None else None


def is_valid_schedule(schedule: str | None, timezone: str | None = None) -> bool:
    """A tag, or ``cron:`` with a valid five-field expression (and zone)."""
    try:
        cron_of(schedule, timezone)
    except ConfigError:
        return False
    return schedule is not None
