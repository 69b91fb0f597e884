"""The run lease: one source runs at a time against one destination dataset.

Two runs of one source sharing a dataset (two cron lines, a retry on top of a slow run, two
schedulers) would load the same rows twice and trample each other's dlt working directory. A
run therefore holds the source's lease while it runs:

* **full tier** (an adapter, more than one writer): a row of ``_dlt_ops_leases`` in the run's
  own dataset, taken by compare-and-swap (rows affected), renewed from a daemon thread every
  third of its term, given back at the end. Any host reaching the destination sees it.
* **core tier, or a single-writer engine** (one process may open the database file): an
  ``flock`` on ``.dlt-ops/locks/<destination>/<dataset>/<source>.lock``. The kernel drops it
  when the process dies, so a dead holder never blocks; the file names the holder.

A holder is reclaimed when its lease expired, or at once when it ran on this host and its
process is gone (the same test backfill chunks use, ``holder_gone``).

Backfill chunks of one backfill *share* the lease (holder ``backfill:<id>``, a member count):
they run side by side, across processes and hosts, while plain runs of the source wait for the
last of them (or for the shared lease to expire, should a member die without leaving).
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from dlt_ops.adapters import Column, ColumnType, Statement, TableSpec
from dlt_ops.clock import utcnow
from dlt_ops.errors import DestinationError, DltOpsError
from dlt_ops.log import get_logger
from dlt_ops.project.run_locks import LockNote, lock_file, read_note

if TYPE_CHECKING:
    from dlt_ops.adapters import DestinationSession
    from dlt_ops.config import ProjectConfig
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.target import Target

log = get_logger(__name__)

__all__ = [
    "LEASES_TABLE",
    "LeaseBusyError",
    "LeaseHolder",
    "lease_term",
    "source_lease",
]

LEASES_TABLE_NAME = "_dlt_ops_leases"
_T, _B, _TS = ColumnType.TEXT, ColumnType.BIGINT, ColumnType.TIMESTAMPTZ
LEASES_TABLE = TableSpec(
    LEASES_TABLE_NAME,
    (
        Column("lease_name", _T, nullable=False),
        Column("holder", _T),
        Column("members", _B),
        Column("run_id", _T),
        Column("host", _T),
        Column("pid", _B),
        Column("acquired_at", _TS),
        Column("lease_expires_at", _TS),
    ),
    unique=("lease_name",),
)
_L = f"{{{LEASES_TABLE_NAME}}}"
SEED = Statement(
    f"INSERT INTO {_L} (lease_name, members) SELECT ?, 0 WHERE NOT EXISTS "
    f"(SELECT 1 FROM {_L} WHERE lease_name = ?)"
)
#: free, ours (a shared holder joins), expired, or held by a process known dead
ACQUIRE = Statement(
    f"UPDATE {_L} SET members = CASE WHEN holder = ? AND lease_expires_at >= ? "
    "THEN members + 1 ELSE 1 END, holder = ?, run_id = ?, host = ?, pid = ?, acquired_at = ?, "
    "lease_expires_at = ? WHERE lease_name = ? AND "
    "(holder IS NULL OR holder = ? OR lease_expires_at < ? OR holder = ?)"
)
HOLDER = Statement(
    f"SELECT holder, run_id, host, pid, lease_expires_at, members FROM {_L} WHERE lease_name = ?"
)
RENEW = Statement(f"UPDATE {_L} SET lease_expires_at = ? WHERE lease_name = ? AND holder = ?")
LEAVE = Statement(f"UPDATE {_L} SET members = members - 1 WHERE lease_name = ? AND holder = ?")
RELEASE = Statement(
    f"UPDATE {_L} SET holder = NULL, run_id = NULL, host = NULL, pid = NULL, members = 0, "
    "lease_expires_at = NULL WHERE lease_name = ? AND holder = ? AND members <= 0"
)

#: How often a waiting run asks again.
POLL_S = 0.25
#: The lease term is this many heartbeats: a holder misses two renewals before it can be taken.
TERM_HEARTBEATS = 3


class LeaseBusyError(DltOpsError):
    """Another run holds the source's lease (and we were not asked to wait that long)."""

    exit_code = 1


class LeaseFileError(DltOpsError):
    """The core-tier lock file cannot be created (nothing was run)."""

    exit_code = 2


@dataclass(frozen=True)
class LeaseHolder:
    """Who holds a source's lease, as the lease row (or lock file) says."""

    holder: str
    run_id: str | None = None
    host: str | None = None
    pid: int | None = None
    expires_at: datetime | None = None

    def describe(self) -> str:
        """``run <id> (pid <p> on <host>)``, or the backfill sharing it."""
        who = f"run {self.run_id}" if self.run_id else f"holder {self.holder}"
        if self.holder.startswith(SHARED_PREFIX):
            who = f"backfill {self.holder[len(SHARED_PREFIX) :]} (latest chunk {who})"
        where = f"pid {self.pid} on {self.host}" if self.pid is not None else ""
        return f"{who} ({where})" if where else who

    def until(self) -> str:
        """When the lease lapses unless renewed."""
        if self.expires_at is None:
            return "its lease ends when that process exits"
        return f"its lease expires at {_iso(self.expires_at)} unless renewed"


SHARED_PREFIX = "backfill:"


def _iso(value: datetime) -> str:
    return str(_utc(value).isoformat()).replace("+00:00", "Z")


def _utc(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return value


def new_holder_token() -> str:
    """``host:pid:<hex>``: the form ``holder_gone`` can judge (same host, pid gone)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def lease_term(config: ProjectConfig) -> timedelta:
    """How long a lease lasts without renewal: three ledger heartbeats."""
    return timedelta(seconds=TERM_HEARTBEATS * config.heartbeat_seconds)


def busy_message(source: str, holder: LeaseHolder, *, waited: float | None) -> str:
    """The refusal: who holds the source and until when, and what to do."""
    head = f"source '{source}' is already running: {holder.describe()} holds it; {holder.until()}."
    if waited:
        return f"{head} Gave up after waiting {waited:g}s."
    return f"{head} Pass --wait to run after it."


# -- destination lease --------------------------------------------------------------------------


class TableLease:
    """The source's lease row in ``_dlt_ops_leases`` (full tier)."""

    def __init__(self, session: DestinationSession, name: str, token: str, term: timedelta,
                 run_id: str) -> None:  # fmt: skip
        self.session, self.name, self.token, self.term = session, name, token, term
        self.run_id = run_id
        self.held = False

    def _prepare(self) -> None:
        try:
            self.session.ensure_dataset()
            self.session.ensure_table(LEASES_TABLE)
            self.session.execute(SEED, self.name, self.name)
        except DestinationError:  # a racing run seeded it: fine if the row is there now
            if not self.session.query(HOLDER, self.name):
                raise

    def holder(self) -> LeaseHolder | None:
        found = self.session.query(HOLDER, self.name)
        if not found or found[0][0] is None:
            return None
        holder, run_id, host, pid, expires, _ = found[0]
        return LeaseHolder(str(holder), run_id, host, None if pid is None else int(pid),
                           _utc(expires))  # fmt: skip

    def try_acquire(self) -> LeaseHolder | None:
        """Take the lease; ``None`` when taken, else who holds it."""
        from dlt_ops.liveness import holder_gone

        dead = ""
        for _ in range(2):  # a second try when the holder turns out to be dead
            now = utcnow()
            got = self.session.execute(
                ACQUIRE, self.token, now, self.token, self.run_id, socket.gethostname(),
                os.getpid(), now, now + self.term, self.name, self.token, now, dead,
            )  # fmt: skip
            if got >= 1:
                self.held = True
                return None
            current = self.holder()
            if current is None:
                continue  # released meanwhile
            gone = holder_gone(current.holder)
            if gone is None:
                return current
            log.warning("lease.reclaimed", holder=current.holder, run_id=current.run_id,
                        reason=gone)  # fmt: skip
            dead = current.holder
        return self.holder() or LeaseHolder(self.token)

    def renew(self) -> bool:
        return self.session.execute(RENEW, utcnow() + self.term, self.name, self.token) >= 1

    def release(self) -> None:
        if not self.held:
            return
        self.held = False
        try:
            # a shared holder leaves; the last member out (or a sole holder) frees the row
            self.session.execute(LEAVE, self.name, self.token)
            self.session.execute(RELEASE, self.name, self.token)
        except DestinationError as exc:  # an unreleased lease expires with its term
            log.warning("lease.release_failed", error=str(exc))


class _Renewer:
    """Renews a table lease every third of its term from a daemon thread."""

    def __init__(self, lease: TableLease) -> None:
        self.lease = lease
        self.interval = max(lease.term.total_seconds() / TERM_HEARTBEATS, 0.05)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="run-lease", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                if not self.lease.renew():
                    log.error("lease.lost", lease=self.lease.name, holder=self.lease.token)
            except Exception as exc:  # a hiccup: the next beat retries before expiry
                log.warning("lease.renew_failed", error=str(exc))

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self.interval + 5)


# -- file lease ---------------------------------------------------------------------------------


class FileLease:
    """An ``flock`` on the source's lock file (core tier, single-writer engines).

    Exclusive for a plain run, shared for backfill chunks. The kernel releases it when the
    holder dies, so there is nothing to reclaim and no expiry.
    """

    def __init__(self, path: Path, token: str, run_id: str, trigger: str | None = None) -> None:
        self.path, self.token, self.run_id, self.trigger = path, token, run_id, trigger
        self._file: IO[str] | None = None

    def try_acquire(self) -> LeaseHolder | None:
        import fcntl

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle = self.path.open("a+", encoding="utf-8")
        except OSError as exc:  # e.g. a read-only project: nothing was run
            raise LeaseFileError(f"could not open the run lock {self.path}: {exc}") from exc
        shared = self.token.startswith(SHARED_PREFIX)
        try:
            fcntl.flock(handle, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return self._holder()
        self._file = handle
        # a plain run writes its note; a shared lock keeps the first member's
        if not shared or handle.tell() == 0:
            note = LockNote.for_this_process(self.token, self.run_id, self.trigger)
            handle.seek(0)
            handle.truncate()
            handle.write(note.to_text())
            handle.flush()
        return None

    def _holder(self) -> LeaseHolder:
        note = read_note(self.path)
        return LeaseHolder(note.holder, note.run_id, note.host, note.pid, None)

    def release(self) -> None:
        if self._file is not None:
            self._file.close()  # closing the descriptor drops the flock
            self._file = None


# -- the run's lease ----------------------------------------------------------------------------


@contextmanager
def source_lease(
    registry: PluginRegistry,
    config: ProjectConfig,
    where: Target,
    *,
    source: str,
    run_id: str,
    wait: float | None = None,
    shared_by: str | None = None,
    trigger: str | None = None,
    on_wait: Callable[[], None] | None = None,
) -> Iterator[None]:
    """Hold ``source``'s lease in ``where`` while the block runs.

    ``wait``: ``None`` refuses at once when another run holds it (:class:`LeaseBusyError`),
    a number of seconds waits that long, ``math.inf`` waits for good. ``shared_by`` (a
    backfill id) shares the lease with that backfill's other chunks. ``trigger`` is noted in a
    lock file, for ``status`` to show while the database file is busy. ``on_wait`` is called
    once, when the lease turns out to be held and the run starts waiting for it.
    """
    token = f"{SHARED_PREFIX}{shared_by}" if shared_by else new_holder_token()
    # a core-tier destination has no table to hold a lease in; a single-writer file would be
    # held open by the lease's session for the whole run: both take a lock file instead
    if not where.has_adapter or where.single_writer:
        path = lock_file(config, where, source)
        lease: FileLease | TableLease = FileLease(path, token, run_id, trigger)
        session = None
    else:
        from dlt_ops.destinations import open_session

        session = open_session(registry, config, where)
        lease = TableLease(session, source, token, lease_term(config), run_id)
    renewer: _Renewer | None = None
    try:
        if isinstance(lease, TableLease):
            lease._prepare()
        _acquire(lease, source, wait, on_wait)
        if isinstance(lease, TableLease):
            renewer = _Renewer(lease)
        yield
    finally:
        if renewer is not None:
            renewer.close()
        lease.release()
        if session is not None:
            session.close()


def _acquire(lease: FileLease | TableLease, source: str, wait: float | None,
             on_wait: Callable[[], None] | None = None) -> None:  # fmt: skip
    started = time.monotonic()
    announced = False
    while True:
        holder = lease.try_acquire()
        if holder is None:
            if announced:
                log.info("lease.acquired", source=source,
                         waited_s=round(time.monotonic() - started, 1))  # fmt: skip
            return
        waited = time.monotonic() - started
        if wait is None or waited >= wait:
            raise LeaseBusyError(busy_message(source, holder, waited=wait and waited))
        if not announced:
            log.info(f"waiting for '{source}': {holder.describe()} holds it; {holder.until()}",
                     source=source, holder=holder.holder)  # fmt: skip
            announced = True
            if on_wait is not None:
                on_wait()
        time.sleep(POLL_S)
