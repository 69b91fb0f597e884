"""The one clock: timezone-aware UTC now, bound as a value (never the engine's clock)."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    """Timezone-aware now; no table dlt-ops writes ever stores a naive timestamp."""
    return datetime.now(UTC)
