"""Read sessions shared by every command that reads a fleet: one per database and dataset.

``status``, ``runs``, ``backfill list|show``, ``checkpoints list``, ``report`` and the
scheduler's due check all take their sessions from a :class:`SessionPool` keyed by
:attr:`Target.key <dlt_ops.target.model.Target.key>`, and read databases side by side with
:func:`map_by_database`, so "the same database" means one thing everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar

from dlt_ops.adapters import (
    ConnectionTarget,
    DestinationAdapter,
    DestinationSession,
    check_identifier,
)
from dlt_ops.destinations import connect_when_free, connection_target, load_adapter, open_when_free
from dlt_ops.project.model import STATE_DIR
from dlt_ops.target.model import Target
from dlt_ops.target.read_cache import CACHE_NAME, ReadCache, SnapshotSession, database_key
from dlt_ops.target.resolve import remembered_connection, target_and_connection

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig
    from dlt_ops.destinations import ResolvedDestination
    from dlt_ops.plugins import PluginRegistry

_R = TypeVar("_R")

#: Ledgers in different databases are read side by side on at most this many threads.
READ_THREADS = 4


def map_by_database(
    lanes: Sequence[Hashable], work: Callable[[int], _R], *, width: int = READ_THREADS
) -> list[_R]:
    """``work(i)`` for each index of ``lanes``, in order of the answer; indexes sharing a lane
    (a database session: see :meth:`SessionPool.key`) run one after another on one thread,
    different lanes on up to ``width`` threads (default :data:`READ_THREADS`).

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

        with ThreadPoolExecutor(min(width, len(grouped))) as threads:
            list(threads.map(run_lane, grouped.values()))
    return [results[index] for index in range(len(lanes))]


class SessionPool:
    """Opens one session per :attr:`Target.key` (engine, database, dataset), lazily, and closes
    them all.

    A failed open is remembered, so every source behind an unreachable destination fails fast
    with the same error instead of waiting for its own connect timeout. A read-only pool over
    an adapter that stamps its content answers repeated reads without connecting
    (:mod:`dlt_ops.target.read_cache`).
    """

    def __init__(
        self, registry: PluginRegistry, config: ProjectConfig, *, read_only: bool = True
    ) -> None:
        self.registry, self.config, self.read_only = registry, config, read_only
        self._open: dict[tuple[str, str, str], DestinationSession | BaseException] = {}
        self._targets: dict[ResolvedDestination, Target] = {}
        #: each resolved target's connection target (its credentials, looked up once)
        self._connections: dict[Target, ConnectionTarget] = {}
        self._cache = ReadCache.shared(config.root / STATE_DIR / CACHE_NAME) if read_only else None

    def target(self, where: ResolvedDestination) -> Target:
        """``where`` as a :class:`Target` (resolved once per destination: credentials are
        looked up in env vars and both TOML files)."""
        if isinstance(where, Target):
            return where
        found = self._targets.get(where)
        if found is None:
            found, conn = target_and_connection(self.registry, self.config, where)
            self._targets[where] = found
            self._connections.setdefault(found, conn)
        return found

    def key(self, where: ResolvedDestination) -> tuple[str, str, str]:
        """The session key of ``where``: sources in one database and dataset share a session."""
        return self.target(where).key

    def get(self, where: ResolvedDestination) -> DestinationSession:
        """The session for ``where`` (raises what opening it raised)."""
        target = self.target(where)
        key = target.key
        if key not in self._open:
            try:
                # a name no adapter could quote is unreadable, never an empty ("missing") ledger
                check_identifier(target.dataset, max_length=1024, subject="dataset")
                adapter = load_adapter(self.registry, target.engine)
                conn = self._connection(adapter, target)
                self._open[key] = self._snapshot(adapter, conn, key) or open_when_free(
                    adapter,
                    conn,  # a single-writer file held for one write: wait, then say so
                )
            except BaseException as exc:  # remembered so the next source fails fast too
                self._open[key] = exc
        found = self._open[key]
        if isinstance(found, BaseException):
            raise found
        return found

    def _connection(self, adapter: DestinationAdapter, target: Target) -> ConnectionTarget:
        """``target``'s connection target as this pool opens it (read-only or not), reusing the
        credentials :meth:`target` looked up where it resolved the target."""
        known = self._connections.get(target) or remembered_connection(
            self.registry, self.config, target
        )
        if known is None or adapter.dlt_setting_keys:
            return connection_target(
                self.config, target, read_only=self.read_only,
                setting_keys=adapter.dlt_setting_keys,
            )  # fmt: skip
        return replace(known, read_only=self.read_only)

    def _snapshot(
        self, adapter: DestinationAdapter, conn: ConnectionTarget, key: tuple[str, str, str]
    ) -> SnapshotSession | None:
        if self._cache is None:
            return None
        stamp = adapter.content_stamp(conn)
        if stamp is None:
            return None
        return SnapshotSession(
            adapter, conn, lambda: connect_when_free(adapter, conn), self._cache,
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
