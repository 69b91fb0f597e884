"""Leases: a heartbeat thread that renews a worker's claims, and the dataset's load lock.

A claim holds a lease (``lease_expires_at``); while the chunk runs, :class:`LeaseKeeper`
renews it every third of the lease. A worker that dies without a word (SIGKILL, OOM) stops
renewing, its lease expires and any later invocation may reclaim the chunk.

Chunks extract in parallel but **load one at a time per dataset**: dlt truncates the shared
``<dataset>_staging`` tables at the start of every merge load and creates destination tables
without ``IF NOT EXISTS``, so two concurrent loads into one dataset can lose rows or fail.
:class:`LoadLock` is a leased row in ``_dlt_backfill_locks`` (compare-and-swap, renewed by the
same heartbeat), portable to every adapter and across hosts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from dlt_ops.adapters import Column, ColumnType, Statement, TableSpec
from dlt_ops.backfill.state import BackfillState, utcnow
from dlt_ops.errors import BackfillStateError, DestinationError
from dlt_ops.liveness import holder_gone
from dlt_ops.log import get_logger

log = get_logger(__name__)

LOCKS_TABLE_NAME = "_dlt_backfill_locks"
LOCKS_TABLE = TableSpec(
    LOCKS_TABLE_NAME,
    (
        Column("lock_name", ColumnType.TEXT, nullable=False),
        Column("holder", ColumnType.TEXT),
        Column("acquired_at", ColumnType.TIMESTAMPTZ),
        Column("lease_expires_at", ColumnType.TIMESTAMPTZ),
    ),
    unique=("lock_name",),
)
_T = f"{{{LOCKS_TABLE_NAME}}}"
SEED_LOCK = Statement(
    f"INSERT INTO {_T} (lock_name) SELECT ? WHERE NOT EXISTS "
    f"(SELECT 1 FROM {_T} WHERE lock_name = ?)"
)
ACQUIRE = Statement(
    f"UPDATE {_T} SET holder = ?, acquired_at = ?, lease_expires_at = ? WHERE lock_name = ? "
    "AND (holder IS NULL OR holder = ? OR lease_expires_at < ? OR holder = ?)"
)
HOLDER = Statement(f"SELECT holder, lease_expires_at FROM {_T} WHERE lock_name = ?")
RENEW_LOCK = Statement(f"UPDATE {_T} SET lease_expires_at = ? WHERE lock_name = ? AND holder = ?")
RELEASE = Statement(
    f"UPDATE {_T} SET holder = NULL, lease_expires_at = NULL WHERE lock_name = ? AND holder = ?"
)
#: How often a waiter re-tries the lock (polling the table, bounded by the lease).
POLL_S = 0.1


class LoadLock:
    """One dataset's load lock for ``source`` (its own row), held by a worker token."""

    def __init__(self, state: BackfillState, name: str, lease: timedelta) -> None:
        self.state, self.name, self.lease = state, name, lease
        self.held = False
        self._ready = False

    def _run(self, what: str, stmt: Statement, *params: object) -> int:
        try:
            return self.state.session.execute(stmt, *params)
        except DestinationError as exc:
            raise BackfillStateError(f"could not {what} in {LOCKS_TABLE_NAME}: {exc}") from exc

    def _prepare(self) -> None:
        if self._ready:
            return
        try:
            self.state.session.ensure_table(LOCKS_TABLE)
            self.state.session.execute(SEED_LOCK, self.name, self.name)
        except DestinationError:  # a racing worker seeded it: fine if the row is there now
            pass
        self._ready = True

    def acquire(self) -> None:
        """Block (polling) until this token holds the lock.

        A holder whose lease expired, or whose process on this host is gone, loses it at once.
        """
        self._prepare()
        token, waited, dead = self.state.token, 0, ""
        while True:
            now = utcnow()
            got = self._run("take the load lock", ACQUIRE, token, now, now + self.lease,
                            self.name, token, now, dead)  # fmt: skip
            if got >= 1:
                self.held = True
                if waited:
                    log.debug("backfill.load_lock_acquired", polls=waited)
                return
            dead = self._dead_holder(announce=waited == 0)
            waited += 1
            if not dead:
                time.sleep(POLL_S)

    def _dead_holder(self, *, announce: bool) -> str:
        """The current holder's token when its process is known gone, else ``""``."""
        try:
            found = self.state.session.query(HOLDER, self.name)
        except DestinationError:
            return ""
        if not found or found[0][0] is None:
            return ""
        holder, expires = found[0]
        gone = holder_gone(holder)
        if gone is not None:
            log.warning("backfill.load_lock_reclaimed", holder=holder, reason=gone)
            return str(holder)
        if announce:
            log.info(
                f"waiting for the load lock held by {holder} (its lease expires at {expires})",
                holder=holder,
                lease_expires_at=str(expires),
            )
        return ""

    def renew(self) -> None:
        """Extend the lease while held (called by the heartbeat)."""
        if self.held:
            self._run("renew the load lock", RENEW_LOCK, utcnow() + self.lease, self.name,
                      self.state.token)  # fmt: skip

    def release(self) -> None:
        """Give the lock up (never raises: an unreleased lock expires with its lease)."""
        if not self.held:
            return
        self.held = False
        try:
            self.state.session.execute(RELEASE, self.name, self.state.token)
        except DestinationError as exc:
            log.warning("backfill.load_lock_release_failed", error=str(exc))

    @contextmanager
    def hold(self) -> Iterator[None]:
        """The runner's load guard: ``pipeline.load()`` runs inside it."""
        self.acquire()
        try:
            yield
        finally:
            self.release()


class LeaseKeeper:
    """Renews the current chunk's lease (and a held load lock) from a daemon thread."""

    def __init__(self, state: BackfillState, lease: timedelta, lock: LoadLock | None) -> None:
        self.state, self.lease, self.lock = state, lease, lock
        self.interval = max(lease.total_seconds() / 3, 0.05)
        self._chunk: tuple[str, str] | None = None
        self._mutex = threading.Lock()
        self._stop = threading.Event()
        self.lost = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="backfill-lease", daemon=True)
        self._thread.start()

    @contextmanager
    def holding(self, backfill_id: str, chunk_id: str) -> Iterator[None]:
        """Renew the lease of ``chunk_id`` while the block runs."""
        with self._mutex:
            self._chunk = (backfill_id, chunk_id)
            self.lost.clear()
        try:
            yield
        finally:
            with self._mutex:
                self._chunk = None

    def _beat(self) -> None:
        while not self._stop.wait(self.interval):
            with self._mutex:
                chunk = self._chunk
                try:
                    if chunk is not None and not self.state.renew(*chunk, self.lease):
                        self.lost.set()
                        log.error("backfill.lease_lost", chunk_id=chunk[1], holder=self.state.token)
                    if self.lock is not None:
                        self.lock.renew()
                except Exception as exc:  # a hiccup: the next beat retries before expiry
                    log.warning("backfill.lease_renew_failed", error=str(exc))

    def close(self) -> None:
        """Stop renewing."""
        self._stop.set()
        self._thread.join(timeout=self.interval + 5)
