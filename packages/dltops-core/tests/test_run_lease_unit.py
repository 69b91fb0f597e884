"""The run lease's parts on real storage: the lease row on DuckDB, the flock on a real file."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from dlt_ops.adapters import ConnectionTarget, DestinationSession
from dlt_ops.runner.lease import (
    HOLDER,
    FileLease,
    LeaseBusyError,
    LeaseHolder,
    TableLease,
    _acquire,
    _Renewer,
    busy_message,
    new_holder_token,
)

HOST = socket.gethostname()


@pytest.fixture
def session(tmp_path: Path) -> Iterator[DestinationSession]:
    from dltops_duckdb.adapter import DuckDBAdapter

    target = ConnectionTarget("duckdb", "ds", tmp_path, credentials="lease.duckdb")
    opened = DestinationSession.open(DuckDBAdapter(), target)
    yield opened
    opened.close()


def table_lease(
    session: DestinationSession, token: str, run_id: str, term: timedelta = timedelta(minutes=5)
) -> TableLease:
    lease = TableLease(session, "src", token, term, run_id)
    lease._prepare()
    return lease


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_holder_describes_itself_and_when_it_lapses() -> None:
    at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    plain = LeaseHolder("h:1:a", "run-a", "box", 42, at)
    assert plain.describe() == "run run-a (pid 42 on box)"
    assert plain.until() == "its lease expires at 2026-01-02T03:04:05Z unless renewed"
    offset = LeaseHolder("h:1:a", expires_at=at.astimezone(timezone(timedelta(hours=2))))
    assert offset.until() == plain.until()
    naive = LeaseHolder("h:1:a", expires_at=at.replace(tzinfo=None))
    assert naive.until() == plain.until()
    assert LeaseHolder("h:1:a").describe() == "holder h:1:a"
    assert LeaseHolder("h:1:a").until() == "its lease ends when that process exits"
    shared = LeaseHolder("backfill:bf1", "chunk-3", "box", 7)
    assert shared.describe() == "backfill bf1 (latest chunk run chunk-3) (pid 7 on box)"


def test_the_refusal_says_who_and_what_to_do() -> None:
    holder = LeaseHolder("h:1:a", "run-a", "box", 42)
    assert busy_message("src", holder, waited=None) == (
        "source 'src' is already running: run run-a (pid 42 on box) holds it; "
        "its lease ends when that process exits. Pass --wait to run after it."
    )
    assert busy_message("src", holder, waited=1.5).endswith("exits. Gave up after waiting 1.5s.")


def test_tokens_name_this_process() -> None:
    host, pid, tail = new_holder_token().rsplit(":", 2)
    assert (host, int(pid), len(tail)) == (HOST, os.getpid(), 8)
    assert new_holder_token() != new_holder_token()


def test_the_lease_row_records_its_holder_and_is_freed_on_release(
    session: DestinationSession,
) -> None:
    first = table_lease(session, f"{HOST}:{os.getpid()}:aa", "run-a")
    before = datetime.now(UTC)
    assert first.try_acquire() is None and first.held
    holder = first.holder()
    assert holder is not None
    assert (holder.holder, holder.run_id, holder.host, holder.pid) == (
        first.token,
        "run-a",
        HOST,
        os.getpid(),
    )
    assert holder.expires_at is not None
    assert (
        before + timedelta(minutes=4)
        < holder.expires_at
        <= datetime.now(UTC) + timedelta(minutes=5)
    )
    other = table_lease(session, f"{HOST}:1:bb", "run-b")
    busy = other.try_acquire()
    assert busy is not None and busy.run_id == "run-a" and not other.held
    first.release()
    assert first.holder() is None and not first.held
    assert session.query(HOLDER, "src")[0][5] == 0  # members back to zero
    first.release()  # a second release is a no-op
    assert other.try_acquire() is None


def test_renewal_moves_the_expiry_and_fails_for_a_lost_lease(session: DestinationSession) -> None:
    lease = table_lease(session, f"{HOST}:1:aa", "run-a", timedelta(seconds=30))
    assert lease.try_acquire() is None
    first = lease.holder()
    time.sleep(0.01)
    assert lease.renew() is True
    renewed = lease.holder()
    assert first and renewed and first.expires_at and renewed.expires_at
    assert renewed.expires_at > first.expires_at
    thief = table_lease(session, f"{HOST}:2:bb", "run-b", timedelta(seconds=30))
    lease.release()
    assert thief.try_acquire() is None
    assert lease.renew() is False


def test_a_dead_holder_on_this_host_is_reclaimed_at_once(session: DestinationSession) -> None:
    dead = table_lease(session, f"{HOST}:{_dead_pid()}:aa", "run-dead")
    assert dead.try_acquire() is None
    taker = table_lease(session, new_holder_token(), "run-new")
    with capture_logs() as logs:
        assert taker.try_acquire() is None
    holder = taker.holder()
    assert holder is not None and holder.run_id == "run-new"
    assert [e["event"] for e in logs] == ["lease.reclaimed"]
    assert logs[0]["run_id"] == "run-dead" and "is gone" in logs[0]["reason"]
    assert session.query(HOLDER, "src")[0][5] == 1  # a fresh holder, not a join
    late = table_lease(session, f"{HOST}:1:cc", "run-late")  # pid 1 runs: not reclaimed
    assert late.try_acquire() is not None


def test_a_live_holder_elsewhere_is_never_reclaimed(session: DestinationSession) -> None:
    away = table_lease(session, f"elsewhere-{HOST}:{_dead_pid()}:aa", "run-away")
    assert away.try_acquire() is None
    taker = table_lease(session, new_holder_token(), "run-new")
    busy = taker.try_acquire()
    assert busy is not None and busy.run_id == "run-away"


def test_shared_members_join_and_the_last_out_frees_it(session: DestinationSession) -> None:
    one = table_lease(session, "backfill:x", "chunk-1")
    two = table_lease(session, "backfill:x", "chunk-2")
    assert one.try_acquire() is None and two.try_acquire() is None
    assert session.query(HOLDER, "src")[0][5] == 2
    one.release()
    assert session.query(HOLDER, "src")[0][5] == 1
    assert two.holder() is not None
    two.release()
    assert two.holder() is None


def test_an_expired_shared_holder_restarts_its_count(session: DestinationSession) -> None:
    old = table_lease(session, "backfill:x", "chunk-1", timedelta(seconds=-1))
    assert old.try_acquire() is None
    again = table_lease(session, "backfill:x", "chunk-2")
    assert again.try_acquire() is None
    assert session.query(HOLDER, "src")[0][5] == 1  # the dead member is not counted


def test_the_renewer_keeps_the_lease_alive_and_stops(session: DestinationSession) -> None:
    lease = table_lease(session, f"{HOST}:1:aa", "run-a", timedelta(seconds=0.3))
    assert lease.try_acquire() is None
    renewer = _Renewer(lease)
    assert renewer.interval == pytest.approx(0.1)
    first = lease.holder()
    time.sleep(0.5)
    later = lease.holder()
    assert first and later and first.expires_at and later.expires_at
    assert later.expires_at > first.expires_at  # renewed past its first term
    renewer.close()
    assert not renewer._thread.is_alive()
    stopped = lease.holder()
    time.sleep(0.3)
    assert lease.holder() == stopped


def test_a_lost_lease_is_logged_by_the_renewer(session: DestinationSession) -> None:
    lease = table_lease(session, f"{HOST}:1:aa", "run-a", timedelta(seconds=0.15))
    with capture_logs() as logs:
        renewer = _Renewer(lease)  # never acquired: every renewal finds no row of ours
        time.sleep(0.3)
        renewer.close()
    assert "lease.lost" in [e["event"] for e in logs]


def test_the_flock_is_exclusive_and_its_note_names_the_holder(tmp_path: Path) -> None:
    path = tmp_path / "locks" / "src.lock"
    first = FileLease(path, f"{HOST}:{os.getpid()}:aa", "run-a", "cron")
    assert first.try_acquire() is None
    second = FileLease(path, f"{HOST}:{os.getpid()}:bb", "run-b")
    busy = second.try_acquire()
    assert busy == LeaseHolder(first.token, "run-a", HOST, os.getpid(), None)
    first.release()
    assert second.try_acquire() is None
    again = FileLease(path, "x:1:cc", "run-c").try_acquire()
    assert again is not None and again.run_id == "run-b"  # the note was rewritten, not appended
    second.release()
    second.release()


def test_shared_flocks_side_by_side_keep_the_first_note(tmp_path: Path) -> None:
    path = tmp_path / "src.lock"
    one, two = FileLease(path, "backfill:x", "chunk-1"), FileLease(path, "backfill:x", "chunk-2")
    assert one.try_acquire() is None and two.try_acquire() is None
    plain = FileLease(path, "h:1:a", "run-a")
    busy = plain.try_acquire()
    assert busy is not None and busy.run_id == "chunk-1"
    one.release()
    assert plain.try_acquire() is not None
    two.release()
    assert plain.try_acquire() is None


def test_waiting_gives_up_after_the_wait_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "src.lock"
    holder = FileLease(path, "h:1:a", "run-a")
    assert holder.try_acquire() is None
    started = time.monotonic()
    with pytest.raises(LeaseBusyError, match=r"Gave up after waiting 0\.[3-9]"):
        _acquire(FileLease(path, "h:2:b", "run-b"), "src", 0.3)
    assert time.monotonic() - started >= 0.3
    with pytest.raises(LeaseBusyError, match="Pass --wait"):
        _acquire(FileLease(path, "h:2:b", "run-b"), "src", None)
    holder.release()


def test_a_waiting_run_starts_once_the_holder_lets_go(tmp_path: Path) -> None:
    import threading

    path = tmp_path / "src.lock"
    holder = FileLease(path, "h:1:a", "run-a")
    assert holder.try_acquire() is None
    threading.Timer(0.4, holder.release).start()
    waiter = FileLease(path, "h:2:b", "run-b")
    with capture_logs() as logs:
        _acquire(waiter, "src", 30)
    events = [e["event"] for e in logs]
    assert events[0].startswith("waiting for 'src': run run-a") and events[-1] == "lease.acquired"
    assert logs[-1]["waited_s"] >= 0.2
    waiter.release()
