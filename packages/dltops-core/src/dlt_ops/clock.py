"""The one clock: timezone-aware UTC now, bound as a value (never the engine's clock)."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    """Timezone-aware now; no table dlt-ops writes ever stores a naive timestamp."""
    return datetime.now(UTC)


def utc_seconds(value: datetime) -> str:
    """``value`` in UTC as ``YYYY-MM-DD HH:MM:SS`` (how listings show a time; isoformat is
    about twice as fast as strftime, and ``status`` over a fleet prints tens of thousands)."""
    return value.astimezone(UTC).isoformat(" ", "seconds")[:19]
