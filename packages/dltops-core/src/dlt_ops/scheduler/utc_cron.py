"""A zoned cron rewritten for a scheduler that reads cron in UTC only (GitHub Actions).

One UTC cron cannot follow a zone across daylight-saving changes. So the rewrite fires at the
UTC hours of every offset the zone takes within a year (``0 6 * * *`` in Europe/Berlin is
``0 4,5 * * *``) and names the local hours the job must check on start (``06``): a fire whose
local hour is not one of them is skipped. What cannot be rewritten so (an offset that is not a
whole hour, or restricted days that the shift would move across midnight) is refused, naming the
source, rather than drifting silently.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from dlt_ops.cron import DEFAULT_ZONE, zone_of
from dlt_ops.errors import ConfigError


@dataclass(frozen=True)
class UtcCron:
    """The UTC cron to write, and the local hours a fire must fall in (``()``: every fire)."""

    cron: str
    timezone: str = DEFAULT_ZONE
    local_hours: tuple[int, ...] = ()


def zone_offsets(zone: str, start: datetime | None = None) -> list[timedelta]:
    """The distinct UTC offsets ``zone`` takes in the year from ``start``."""
    tz = zone_of(zone)
    base = (start or datetime.now(UTC)).replace(minute=0, second=0, microsecond=0)
    found = {(base + timedelta(hours=6 * k)).astimezone(tz).utcoffset() for k in range(4 * 366)}
    return sorted(o for o in found if o is not None)


def to_utc(source: str, cron: str, zone: str, start: datetime | None = None) -> UtcCron:
    """``cron`` read in ``zone`` as a :class:`UtcCron`; ``ConfigError`` when it cannot be."""
    from croniter import croniter

    if zone == DEFAULT_ZONE:
        return UtcCron(cron)
    offsets = zone_offsets(zone, start)
    minute, hour, *days = cron.split()
    if any(o % timedelta(hours=1) for o in offsets):
        raise _refused(source, cron, zone, "its UTC offset is not a whole number of hours")
    expanded = croniter(cron).expanded[1]
    local = list(range(24)) if expanded == ["*"] else sorted(int(h) for h in expanded)
    shifts = [int(o / timedelta(hours=1)) for o in offsets]
    moved = [h - s for s in shifts for h in local]
    if any(d != "*" for d in days) and any(not 0 <= h < 24 for h in moved):
        raise _refused(source, cron, zone, "its days would move across midnight in UTC")
    utc_hours = sorted({h % 24 for h in moved})
    hours = "*" if len(utc_hours) == 24 else ",".join(map(str, utc_hours))
    check = () if len(shifts) == 1 or hour == "*" else tuple(local)
    return UtcCron(" ".join([minute, hours, *days]), zone, check)


def _refused(source: str, cron: str, zone: str, why: str) -> ConfigError:
    return ConfigError(
        f"source '{source}': schedule '{cron}' in {zone} cannot be written for GitHub Actions, "
        f"whose cron runs in UTC only: {why}. Write that source's schedule in UTC, or run it "
        "with `dlt-ops scheduler run` or cron (CRON_TZ)."
    )
