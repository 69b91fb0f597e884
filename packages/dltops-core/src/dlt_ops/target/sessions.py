"""Read sessions shared by every command that reads a fleet: one per database and dataset.

``status``, ``runs``, ``backfill list|show``, ``checkpoints list``, ``report`` and the
scheduler's due check all take their sessions from a :class:`SessionPool` keyed by
:attr:`Target.key <dlt_ops.target.model.Target.key>`, and read databases side by side with
:func:`map_by_database`, so "the same database" means one thing everywhere.
"""

from __future__ import annotations

import threading
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
from dlt_ops.target.resolve import once_per_block, remembered_connection, target_and_connection

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig
    from dlt_ops.destinations import ResolvedDestination
    from dlt_ops.plugins import PluginRegistry

_R = TypeVar("_R")

#: Ledgers in different databases are read side by side on at most this many threads.
READ_THREADS = 4
#: Two lanes in a row slower than this wait on their databases (a connect, a query) rather
#: than answer from the read cache (a garbage collection makes one slow, not two): from then
#: on the other lanes are read side by side.
SLOW_LANE_S = 0.004
#: A lane still busy after this long (a slow connect, a remote query) starts the side-by-side
#: reads at once.
STUCK_LANE_S = 0.025


def map_by_database(
    lanes: Sequence[Hashable], work: Callable[[int], _R], *, width: int = READ_THREADS
) -> list[_R]:
    """``work(i)`` for each index of ``lanes``, in order of the answer; indexes sharing a lane
    (a database session: see :meth:`SessionPool.key`) run one after another on one thread,
    different lanes on up to ``width`` threads (default :data:`READ_THREADS`).

    Reading many per-source databases is mostly waiting on opens and queries that release the
    GIL, but a read the cache answers is pure Python, which threads only slow down (they take
    turns on the GIL). So the calling thread reads the lanes one by one, and helper threads
    join in once lanes wait on their databases (:data:`SLOW_LANE_S`, :data:`STUCK_LANE_S`).
    Callers load the plugins they need first, on their own thread, so no lookup races
    another; a session never leaves its lane's thread.
    """
    grouped: dict[Hashable, list[int]] = {}
    for index, lane in enumerate(lanes):
        grouped.setdefault(lane, []).append(index)
    results: dict[int, _R] = {}

    def run_lane(indexes: list[int]) -> None:
        for index in indexes:
            results[index] = work(index)

    if len(grouped) <= 1 or width <= 1:
        for indexes in grouped.values():
            run_lane(indexes)
    else:
        _LaneQueue(list(grouped.values()), run_lane, width).run()
    return [results[index] for index in range(len(lanes))]


class _LaneQueue:
    """Lanes taken one at a time by the calling thread; ``width - 1`` helper threads join once
    two lanes in a row were slow, or a watcher sees one lane busy for :data:`STUCK_LANE_S`."""

    def __init__(
        self, lanes: list[list[int]], run_lane: Callable[[list[int]], None], width: int
    ) -> None:
        from collections import deque

        self._pending = deque(lanes)
        self._run_lane, self._width = run_lane, width
        self._errors: list[BaseException] = []
        self._started = 0  # lanes the calling thread began, and whether one is under way
        self._busy = False
        self._helpers: list[threading.Thread] = []
        self._helping = threading.Lock()  # the watcher and the calling thread both may start them
        self._over = threading.Event()

    def run(self) -> None:
        watcher = threading.Thread(target=self._watch, name="dlt-ops-lane-watch", daemon=True)
        watcher.start()
        try:
            self._drain_calling()
        except BaseException:  # Ctrl-C: the helpers finish the lane they are in, no more
            self._pending.clear()
            raise
        finally:
            self._over.set()
            watcher.join()  # after this, no helper starts
            for helper in self._helpers:
                helper.join()
        if self._errors:
            raise self._errors[0]

    def _drain_calling(self) -> None:
        from time import perf_counter

        slow_in_a_row = 0
        while not self._errors and (lane := self._take()) is not None:
            self._started += 1
            self._busy = True
            began = perf_counter()
            try:
                if not self._do(lane):
                    return
            finally:
                self._busy = False
            slow_in_a_row = slow_in_a_row + 1 if perf_counter() - began > SLOW_LANE_S else 0
            if slow_in_a_row >= 2:
                self._start_helpers()

    def _drain(self) -> None:
        while not self._errors and (lane := self._take()) is not None:
            if not self._do(lane):
                return

    def _take(self) -> list[int] | None:
        try:
            return self._pending.popleft()  # atomic: each lane is taken once
        except IndexError:
            return None

    def _do(self, lane: list[int]) -> bool:
        try:
            self._run_lane(lane)
        except Exception as exc:  # the caller gets the first; the others stop taking lanes
            self._errors.append(exc)
            return False
        return True

    def _start_helpers(self) -> None:
        with self._helping:
            if self._helpers or self._over.is_set():
                return
            for k in range(self._width - 1):
                helper = threading.Thread(target=self._drain, name=f"dlt-ops-read-{k}")
                self._helpers.append(helper)
                helper.start()

    def _watch(self) -> None:
        seen = -1
        while not self._over.wait(STUCK_LANE_S) and not self._helpers:
            started, busy = self._started, self._busy
            if busy and started == seen:  # the same lane at two looks: it waits on a database
                self._start_helpers()
                return
            seen = started


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
        self._adapters: dict[str, DestinationAdapter] = {}
        self._cache = ReadCache.shared(config.root / STATE_DIR / CACHE_NAME) if read_only else None
        if self._cache is not None:  # here, before reads start: parsing it is no database wait
            self._cache.load()

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
                adapter = self._adapter(target.engine)
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

    def _adapter(self, engine: str) -> DestinationAdapter:
        """``engine``'s adapter, looked up once per pool (a fleet asks per database)."""
        found = self._adapters.get(engine)
        if found is None:
            found = self._adapters[engine] = load_adapter(self.registry, engine)
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
        # one stamp per database for a command's passes (the scheduler's due check, freshness
        # check and alert state each take a pool): nothing writes while they read
        stamp = once_per_block(("content_stamp", key), lambda: adapter.content_stamp(conn))
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
