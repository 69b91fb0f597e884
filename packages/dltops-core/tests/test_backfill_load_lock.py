"""The dataset's load lock on DuckDB: who holds it, how long, what waiting and reclaiming say,
and what a broken destination turns into."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from dlt_ops.adapters import ConnectionTarget, DestinationSession
from dlt_ops.backfill.lease import HOLDER, LoadLock
from dlt_ops.backfill.state import BackfillState
from dlt_ops.errors import BackfillStateError

HOST = socket.gethostname()
LEASE = timedelta(minutes=5)


@pytest.fixture
def session(tmp_path: Path) -> Iterator[DestinationSession]:
    from dltops_duckdb.adapter import DuckDBAdapter

    target = ConnectionTarget("duckdb", "ds", tmp_path, credentials="lock.duckdb")
    opened = DestinationSession.open(DuckDBAdapter(), target)
    yield opened
    opened.close()


def lock(session: DestinationSession, token: str, lease: timedelta = LEASE) -> LoadLock:
    return LoadLock(BackfillState(session, token), "daily", lease)


def row(session: DestinationSession) -> tuple[object, datetime | None]:
    holder, expires = session.query(HOLDER, "daily")[0]
    if isinstance(expires, datetime) and expires.tzinfo is None:
        expires = expires.replace(tzinfo=UTC)
    return holder, expires


def test_the_row_names_the_holder_for_its_lease_and_is_freed(session: DestinationSession) -> None:
    mine = lock(session, "h:1:a")
    assert not mine.held
    before = datetime.now(UTC)
    mine.acquire()
    holder, expires = row(session)
    assert holder == "h:1:a" and mine.held
    assert expires is not None and before + LEASE - timedelta(seconds=5) <= expires
    assert expires <= datetime.now(UTC) + LEASE
    mine.release()
    assert row(session) == (None, None) and not mine.held
    mine.acquire()  # the same name again: one row, seeded once
    assert len(session.query(HOLDER, "daily")) == 1
    mine.release()


def test_renewal_extends_only_a_held_lock(session: DestinationSession) -> None:
    short = timedelta(seconds=30)
    mine = lock(session, "h:1:a", short)
    mine.renew()  # not held: nothing to renew, nothing raised
    mine.acquire()
    _, first = row(session)
    mine.lease = LEASE
    mine.renew()
    holder, renewed = row(session)
    assert holder == "h:1:a" and first is not None and renewed is not None
    assert renewed > first + timedelta(minutes=4)
    mine.release()


def test_waiting_is_announced_once_and_polls_gently(session: DestinationSession) -> None:
    first = lock(session, "h:1:a")
    first.acquire()
    raw_expiry = session.query(HOLDER, "daily")[0][1]
    threading.Timer(0.45, first.release).start()
    second = lock(session, "h:1:b")
    with capture_logs() as logs:
        second.acquire()
    waiting = [e for e in logs if e["event"].startswith("waiting for the load lock")]
    assert len(waiting) == 1 and logs[0] is waiting[0]
    assert waiting[0]["holder"] == "h:1:a"
    assert waiting[0]["lease_expires_at"] == str(raw_expiry)
    assert waiting[0]["event"] == (
        f"waiting for the load lock held by h:1:a (its lease expires at {raw_expiry})"
    )
    acquired = logs[-1]
    assert acquired["event"] == "backfill.load_lock_acquired"
    assert 2 <= acquired["polls"] <= 20  # one poll every 0.1 s, not a busy loop
    second.release()


def test_a_dead_holder_loses_the_lock_at_once(session: DestinationSession) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    dead_token = f"{HOST}:{proc.pid}:aa"
    lock(session, dead_token).acquire()
    taker = lock(session, "h:1:b")
    with capture_logs() as logs:
        taker.acquire()
    assert row(session)[0] == "h:1:b"
    assert logs[0]["event"] == "backfill.load_lock_reclaimed"
    assert logs[0]["holder"] == dead_token
    assert logs[0]["reason"] == f"its process (pid {proc.pid} on {HOST}) is gone"
    assert not [e for e in logs if e["event"].startswith("waiting")]


def test_a_broken_destination_is_a_backfill_state_error(session: DestinationSession,
                                                        tmp_path: Path) -> None:  # fmt: skip
    from dltops_duckdb.adapter import DuckDBAdapter

    target = ConnectionTarget("duckdb", "ds", tmp_path, credentials="lock.duckdb")
    other = DestinationSession.open(DuckDBAdapter(), target)
    held = lock(other, "h:1:a")
    held.acquire()
    other.close()
    with capture_logs() as logs:
        held.release()  # never raises: the lock expires with its lease
    assert logs[0]["event"] == "backfill.load_lock_release_failed"
    assert "Connection already closed" in logs[0]["error"]
    held.held = True
    with pytest.raises(BackfillStateError, match=r"could not renew the load lock in "
                       r"_dlt_backfill_locks: duckdb statement failed"):  # fmt: skip
        held.renew()
    fresh = LoadLock(BackfillState(other, "h:1:c"), "daily", LEASE)
    fresh._ready = True
    with pytest.raises(BackfillStateError, match="could not take the load lock in"):
        fresh.acquire()
