"""Reading ledgers back: one session per destination, the sinks a source's ledger lives in.

Shared by ``status``, ``runs show|list``, ``runs prune`` and ``backfill show``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from dlt_ops.adapters import (
    ConnectionTarget,
    DestinationAdapter,
    DestinationSession,
    check_identifier,
)
from dlt_ops.config import ProjectConfig
from dlt_ops.destinations import (
    ResolvedDestination,
    connect_when_free,
    connection_target,
    load_adapter,
    open_when_free,
)
from dlt_ops.ledger.build import build_sinks
from dlt_ops.ledger.read_cache import CACHE_NAME, ReadCache, SnapshotSession, database_key
from dlt_ops.ledger.sinks import LedgerSink
from dlt_ops.plugins import PluginRegistry
from dlt_ops.project.model import STATE_DIR

_R = TypeVar("_R")

#: Ledgers in different databases are read side by side on at most this many threads.
READ_THREADS = 4


def map_by_database(lanes: Sequence[Hashable], work: Callable[[int], _R]) -> list[_R]:
    """``work(i)`` for each index of ``lanes``, in order of the answer; indexes sharing a lane
    (a database session: see :meth:`SessionPool.key`) run one after another on one thread,
    different lanes on up to :data:`READ_THREADS` threads.

    Reading many per-source databases is mostly waiting on opens and queries that release the
    GIL. Callers load the plugins they need first, on their own thread, so no lookup races
    another; a session never leaves its lane's thread.
    """
    grouped: dict[Hashable, list[int]] = {}
    for index, lane in enumerate(lanes):
        grouped.setdefault(lane, []).append(index)
    results: dict[int, _R] = {}

    def run_lane(indexes: list[int]) -> None:
        for index in indexes:
            results[index] = work(index)

    if len(grouped) <= 1:
        for indexes in grouped.values():
            run_lane(indexes)
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(READ_THREADS, len(grouped))) as threads:
            list(threads.map(run_lane, grouped.values()))
    return [results[index] for index in range(len(lanes))]


class SessionPool:
    """Opens one session per destination+dataset+credentials, lazily, and closes them all.

    A failed open is remembered, so every source behind an unreachable destination fails fast
    with the same error instead of waiting for its own connect timeout. A read-only pool over
    an adapter that stamps its content answers repeated reads without connecting
    (:mod:`dlt_ops.ledger.read_cache`).
    """

    def __init__(
        self, registry: PluginRegistry, config: ProjectConfig, *, read_only: bool = True
    ) -> None:
        self.registry, self.config, self.read_only = registry, config, read_only
        self._open: dict[tuple[str, str, str], DestinationSession | BaseException] = {}
        self._keys: dict[ResolvedDestination, tuple[str, str, str]] = {}
        self._cache = ReadCache(config.root / STATE_DIR / CACHE_NAME) if read_only else None

    def key(self, where: ResolvedDestination) -> tuple[str, str, str]:
        """Sources sharing engine, dataset and credentials share one session (resolved once
        per destination: credentials are looked up in env vars and both TOML files)."""
        key = self._keys.get(where)
        if key is None:
            key = self._keys[where] = self._key(connection_target(self.config, where), where)
        return key

    @staticmethod
    def _key(target: ConnectionTarget, where: ResolvedDestination) -> tuple[str, str, str]:
        creds = repr(target.credentials) if target.credentials is not None else where.pipeline_name
        return (where.engine, where.dataset, creds)

    def get(self, where: ResolvedDestination) -> DestinationSession:
        """The session for ``where`` (raises what opening it raised)."""
        key = self.key(where)
        if key not in self._open:
            try:
                # a name no adapter could quote is unreadable, never an empty ("missing") ledger
                check_identifier(where.dataset, max_length=1024, subject="dataset")
                adapter = load_adapter(self.registry, where.engine)
                target = connection_target(
                    self.config, where, read_only=self.read_only,
                    setting_keys=adapter.dlt_setting_keys,
                )  # fmt: skip
                self._open[key] = self._snapshot(adapter, target, key) or open_when_free(
                    adapter,
                    target,  # a single-writer file held for one write: wait, then say so
                )
            except BaseException as exc:  # remembered so the next source fails fast too
                self._open[key] = exc
        found = self._open[key]
        if isinstance(found, BaseException):
            raise found
        return found

    def _snapshot(
        self, adapter: DestinationAdapter, target: ConnectionTarget, key: tuple[str, str, str]
    ) -> SnapshotSession | None:
        if self._cache is None:
            return None
        stamp = adapter.content_stamp(target)
        if stamp is None:
            return None
        return SnapshotSession(
            adapter, target, lambda: connect_when_free(adapter, target), self._cache,
            database_key(key), str(stamp),
        )  # fmt: skip

    def close(self) -> None:
        """Close every session opened (and keep what was read for the next command)."""
        for session in self._open.values():
            if isinstance(session, DestinationSession):
                session.close()
        if self._cache is not None:
            self._cache.save()

    def __enter__(self) -> SessionPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class SourceLedger:
    """Where one source's ledger lives and the sinks that hold it."""

    where: ResolvedDestination
    full_tier: bool
    sinks: list[tuple[str, LedgerSink]]

    def with_method(self, method: str) -> list[tuple[str, LedgerSink]]:
        """The sinks that implement ``method`` (``read_runs``, ``read_receipts``, ``prune``)."""
        return [(n, s) for n, s in self.sinks if callable(getattr(s, method, None))]


def source_ledger(
    registry: PluginRegistry, config: ProjectConfig, where: ResolvedDestination, pool: SessionPool
) -> SourceLedger:
    """The configured sinks of a source, the ``destination`` one only on full tier (a
    core-tier destination has no table; the other sinks stand in for it)."""
    full_tier = registry.has("destination", where.engine)
    names = tuple(n for n in config.ledger_sinks if n != "destination" or full_tier)
    sinks = build_sinks(
        registry, config, engine=where.engine, dataset=where.dataset, full_tier=full_tier,
        open_session=lambda: pool.get(where), names=names,
    )  # fmt: skip
    return SourceLedger(where, full_tier, sinks)


def reading_lane(
    registry: PluginRegistry, pool: SessionPool, ledger: SourceLedger
) -> tuple[str, str, str]:
    """The lane a ledger's reads take in :func:`map_by_database` (its session key). The adapter
    is loaded here, on the calling thread, so no reading thread loads a plugin."""
    if ledger.full_tier:
        load_adapter(registry, ledger.where.engine)
    return pool.key(ledger.where)
