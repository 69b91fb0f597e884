"""Reading ledgers back: the sinks a source's ledger lives in, and the lane its reads take.

Shared by ``status``, ``runs show|list``, ``runs prune`` and ``backfill show``; the sessions
come from :class:`dlt_ops.target.sessions.SessionPool`.
"""

from __future__ import annotations

from dataclasses import dataclass

from dlt_ops.config import ProjectConfig
from dlt_ops.destinations import ResolvedDestination
from dlt_ops.ledger.build import build_sinks
from dlt_ops.ledger.sinks import LedgerSink
from dlt_ops.plugins import PluginRegistry
from dlt_ops.target import Target
from dlt_ops.target.sessions import SessionPool


@dataclass
class SourceLedger:
    """Where one source's ledger lives and the sinks that hold it."""

    where: Target
    sinks: list[tuple[str, LedgerSink]]

    @property
    def has_adapter(self) -> bool:
        """Whether the ledger's destination has an adapter (its ``destination`` sink is real)."""
        return self.where.has_adapter

    def with_method(self, method: str) -> list[tuple[str, LedgerSink]]:
        """The sinks that implement ``method`` (``read_runs``, ``read_receipts``, ``prune``)."""
        return [(n, s) for n, s in self.sinks if callable(getattr(s, method, None))]


def source_ledger(
    registry: PluginRegistry, config: ProjectConfig, where: ResolvedDestination, pool: SessionPool
) -> SourceLedger:
    """The configured sinks of a source (the ``destination`` one only where it has an
    adapter: a core-tier destination has no table; the other sinks stand in for it)."""
    target = pool.target(where)
    sinks = build_sinks(
        registry, config, target, open_session=lambda: pool.get(target), reading=True
    )
    return SourceLedger(target, sinks)


def reading_lane(
    registry: PluginRegistry, pool: SessionPool, ledger: SourceLedger
) -> tuple[str, str, str]:
    """The lane a ledger's reads take in :func:`~dlt_ops.target.sessions.map_by_database` (its
    session key). The target was resolved on the calling thread (its adapter loaded there), so
    no reading thread loads a plugin."""
    return ledger.where.key
