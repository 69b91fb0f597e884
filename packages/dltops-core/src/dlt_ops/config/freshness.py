"""``[sources.<X>.dlt_ops] freshness``: how old a source's last successful run may get.

``freshness = "26h"`` is one level (a miss is an error); ``freshness = {warn = "26h", error =
"50h"}`` gives two, either may be left out, and ``warn`` must be shorter than ``error``. A
duration is whole numbers with units ``w``, ``d``, ``h``, ``m``, ``s``, largest first:
``"90m"``, ``"1d12h"``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

EXPECTED = (
    'a duration such as "26h", or a table {warn = "26h", error = "50h"} (warn shorter than '
    "error; units w d h m s)"
)
_UNITS = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}
_DURATION = re.compile(r"(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")


def parse_duration(text: str) -> timedelta | None:
    """``"1d12h"`` as a timedelta; ``None`` for anything else (or a zero duration)."""
    match = _DURATION.fullmatch(text.strip())
    if not text.strip() or match is None:
        return None
    seconds = sum(int(n) * s for n, s in zip(match.groups(), _UNITS.values(), strict=True) if n)
    return timedelta(seconds=seconds) if seconds else None


@dataclass(frozen=True)
class FreshnessSLA:
    """The levels of a source's freshness SLA (at least one is set)."""

    warn: timedelta | None = None
    error: timedelta | None = None

    def as_json(self) -> dict[str, float | None]:
        """Seconds per level."""
        return {
            "warn_after_s": self.warn.total_seconds() if self.warn else None,
            "error_after_s": self.error.total_seconds() if self.error else None,
        }


def parse_freshness(value: Any) -> FreshnessSLA | None:
    """The SLA ``value`` spells; ``None`` when it is not one (the schema's check)."""
    if isinstance(value, str):
        error = parse_duration(value)
        return FreshnessSLA(error=error) if error else None
    if not isinstance(value, dict) or not value or set(value) - {"warn", "error"}:
        return None
    levels = {k: parse_duration(v) if isinstance(v, str) else None for k, v in value.items()}
    if None in levels.values():
        return None
    warn, error = levels.get("warn"), levels.get("error")
    if warn and error and warn >= error:
        return None
    return FreshnessSLA(warn, error)


def is_freshness(value: Any) -> bool:
    """``value`` is a valid ``freshness`` setting."""
    return parse_freshness(value) is not None
