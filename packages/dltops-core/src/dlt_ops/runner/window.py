"""Time windows: tz-aware ISO bounds, normalised to UTC, ``[from, to)``.

Shared by ``pipeline run --from/--to`` and ``pipeline backfill``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from dlt_ops.errors import UsageError


def parse_bound(text: str, flag: str) -> datetime:
    """Parse ``text`` as a timezone-aware ISO-8601 timestamp and return it in UTC."""
    raw = text.strip()
    try:
        # "Z" is accepted by fromisoformat from Python 3.11 on
        value = datetime.fromisoformat(raw)
    except ValueError:
        raise UsageError(
            f"{flag} {text!r} is not a parsable ISO-8601 timestamp "
            f"(e.g. 2026-01-01T00:00:00Z or 2026-01-01T00:00:00+00:00)."
        ) from None
    if value.tzinfo is None or value.utcoffset() is None:
        raise UsageError(
            f"{flag} {text!r} is timezone-naive; pass an explicit offset (e.g. {raw}Z or "
            f"{raw}+00:00) — bounds are normalized to UTC."
        )
    return value.astimezone(UTC)


@dataclass(frozen=True)
class Window:
    """A bounded window ``[start, end)`` in UTC."""

    start: datetime
    end: datetime

    def __post_init__(self) -> None:
        if self.start >= self.end:
            raise UsageError(
                f"empty window: --from {self.start.isoformat()} must be before --to "
                f"{self.end.isoformat()} (bounds are [from, to))."
            )

    @classmethod
    def parse(cls, start: str, end: str) -> Window:
        """Both bounds from the command line."""
        return cls(parse_bound(start, "--from"), parse_bound(end, "--to"))


def window_from_options(start: str | None, end: str | None) -> Window | None:
    """``--from``/``--to`` given together, or neither."""
    if start is None and end is None:
        return None
    if start is None or end is None:
        raise UsageError("--from and --to go together: give both bounds of the window or neither.")
    return Window.parse(start, end)


_DURATION = re.compile(r"(\d+)([dhm])")
_UNIT = {"d": "days", "h": "hours", "m": "minutes"}


def parse_duration(text: str, flag: str) -> tuple[timedelta, str]:
    """``N{d|h|m}`` → (duration, canonical label), ``07d`` → ``7d``; zero or other forms refused."""
    match = _DURATION.fullmatch(text.strip())
    if match is None:
        raise UsageError(
            f"invalid {flag} {text!r}: simple <N>d / <N>h / <N>m forms only (e.g. 7d, 24h, 30m)."
        )
    count, unit = int(match.group(1)), match.group(2)
    if count == 0:
        raise UsageError(f"invalid {flag} {text!r}: the duration must be > 0.")
    return timedelta(**{_UNIT[unit]: count}), f"{count}{unit}"
