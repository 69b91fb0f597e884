"""The one answer to "where do a source's tables live": a :class:`Target`.

A source's config names an engine and a dataset; the installation decides which adapter
serves that engine (its tier) and the credentials decide which physical database it is. Every
command resolves a :class:`Target` once per source and hands it down, so sessions, the read
cache and every per-database listing agree on what "the same database" means.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from dlt_ops.adapters import Capabilities
from dlt_ops.destinations import ResolvedDestination


class Tier(StrEnum):
    """How much dlt-ops can do on a destination (a string enum: ``Tier.CORE == "core"``, as
    JSON output and older callers spell it)."""

    #: an installed adapter package serves the engine
    FULL = "full"
    #: an adapter built from dlt's own SQL client (``[dlt_ops] derived_adapters``), untested
    DERIVED = "derived"
    #: no adapter: the run is recorded in the other ledger sinks only, no tables of ours
    CORE = "core"

    @property
    def has_adapter(self) -> bool:
        """Whether dlt-ops can open the destination and keep its tables there."""
        return self is not Tier.CORE


@dataclass(frozen=True)
class Target(ResolvedDestination):
    """A source's destination as one value: engine, dataset and pipeline name (what the config
    says), the physical database they point at, the adapter tier and its capabilities.

    ``database`` names the database without revealing a secret: an embedded database file's
    absolute path, or the credentials with every password-like part removed. Two sources with
    equal :attr:`key` share one database *and* dataset, so one session and one cache entry.
    """

    database: str = ""
    tier: Tier = Tier.CORE
    #: the adapter's declared capabilities (``None`` on core tier)
    capabilities: Capabilities | None = field(default=None, compare=False)

    @property
    def has_adapter(self) -> bool:
        """Whether the destination has an adapter (full or derived tier)."""
        return self.tier.has_adapter

    @property
    def single_writer(self) -> bool:
        """Whether one process at a time may write the database (an embedded file engine)."""
        return self.capabilities is not None and self.capabilities.single_writer

    @property
    def key(self) -> tuple[str, str, str]:
        """``(engine, database, dataset)``: what sessions, caches and listings are keyed by."""
        return (self.engine, self.database, self.dataset)
