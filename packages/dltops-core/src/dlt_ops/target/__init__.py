"""Where a source's tables live, resolved once: :class:`Target`, its tier, and the sessions
and read cache every fleet-wide reader shares (see docs/architecture.md)."""

from dlt_ops.target.model import Target, Tier
from dlt_ops.target.resolve import (
    adapter_tier,
    credentials_identity,
    database_identity,
    resolve_target,
    resolving_once,
    target_of,
)

__all__ = [
    "Target",
    "Tier",
    "adapter_tier",
    "credentials_identity",
    "database_identity",
    "resolve_target",
    "resolving_once",
    "target_of",
]
