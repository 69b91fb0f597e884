"""``_dlt_backfills`` transitions and the load lock, on a real DuckDB file: a chunk is held by
one worker at a time, a dead holder's chunk is taken back, and nobody else's row moves."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from dlt_ops.adapters import ConnectionTarget, DestinationSession
from dlt_ops.backfill.lease import ACQUIRE as LOCK_ACQUIRE
from dlt_ops.backfill.lease import LeaseKeeper, LoadLock
from dlt_ops.backfill.plan import BackfillPlan
from dlt_ops.backfill.state import BackfillState, ChunkRow, ChunkStatus
from dlt_ops.errors import BackfillStateError, LeaseLostError

HOST = socket.gethostname()
LEASE = timedelta(minutes=5)


@pytest.fixture
def session(tmp_path: Path) -> Iterator[DestinationSession]:
    from dltops_duckdb.adapter import DuckDBAdapter

    target = ConnectionTarget("duckdb", "ds", tmp_path, credentials="bf.duckdb")
    opened = DestinationSession.open(DuckDBAdapter(), target)
    yield opened
    opened.close()


@pytest.fixture
def plan() -> BackfillPlan:
    return BackfillPlan.build("daily", "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z", "1d")


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_seeding_writes_every_chunk_pending_once(
    session: DestinationSession, plan: BackfillPlan
) -> None:
    state = BackfillState(session, "h:1:a")
    assert not state.exists()
    rows = state.seed(plan, "daily_pipeline")
    assert state.exists()
    assert list(rows) == ["000000", "000001", "000002"]
    first = rows["000000"]
    assert (first.status, first.attempts, first.claimed_by) == ("pending", 0, None)
    assert (first.chunk_from, first.chunk_to) == (
        datetime(2026, 1, 1, tzinfo=UTC),
        datetime(2026, 1, 2, tzinfo=UTC),
    )
    assert (first.backfill_from, first.backfill_to, first.chunk_size) == (
        datetime(2026, 1, 1, tzinfo=UTC),
        datetime(2026, 1, 4, tzinfo=UTC),
        "1d",
    )
    assert first.pipeline_name == "daily_pipeline" and first.source_section == "daily"
    assert first.run_id == plan.chunks[0].run_id and first.resource_name is None
    assert state.seed(plan, "daily_pipeline") == rows  # idempotent
    assert len(state.all_rows()) == 3


def test_a_plan_with_other_inputs_is_refused(
    session: DestinationSession, plan: BackfillPlan
) -> None:
    state = BackfillState(session, "h:1:a")
    state.seed(plan, "p")
    rows = state.rows(plan.backfill_id).values()
    other = BackfillPlan.build("daily", "2026-01-01T00:00:00Z", "2026-01-05T00:00:00Z", "1d")
    with pytest.raises(BackfillStateError, match="exists with different inputs"):
        BackfillState.verify(other, rows)
    scoped = BackfillPlan.build(
        "daily", "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z", "1d", resources=["a"]
    )
    with pytest.raises(BackfillStateError, match="resources=None"):
        BackfillState.verify(scoped, rows)
    BackfillState.verify(plan, rows)


def test_one_claim_wins_and_the_chunk_walks_to_completed(
    session: DestinationSession, plan: BackfillPlan
) -> None:
    mine, theirs = BackfillState(session, "h:1:a"), BackfillState(session, "h:1:b")
    mine.seed(plan, "p")
    bid = plan.backfill_id
    before = datetime.now(UTC)
    won = mine.claim(bid, "000000", LEASE)
    assert won and won.reclaimed is None and won.reason is None
    assert not theirs.claim(bid, "000000", LEASE)
    row = mine.rows(bid)["000000"]
    assert (row.status, row.claimed_by, row.attempts) == ("claimed", "h:1:a", 1)
    assert row.claimed_at is not None and row.claimed_at >= before
    assert row.lease_expires_at is not None
    assert row.lease_expires_at >= before + LEASE - timedelta(seconds=1)
    with pytest.raises(LeaseLostError, match=r"this worker \(h:1:b\) no longer holds"):
        theirs.mark_running(bid, "000000")
    mine.mark_running(bid, "000000")
    assert mine.rows(bid)["000000"].status == "running"
    assert mine.rows(bid)["000000"].started_at is not None
    assert mine.renew(bid, "000000", LEASE) and not theirs.renew(bid, "000000", LEASE)
    with pytest.raises(LeaseLostError):
        theirs.mark_completed(bid, "000000", 5)
    mine.mark_completed(bid, "000000", 5)
    done = mine.rows(bid)["000000"]
    assert (done.status, done.records_loaded, done.lease_expires_at) == ("completed", 5, None)
    assert done.completed_at is not None
    assert not mine.renew(bid, "000000", LEASE)  # a completed chunk is never renewed
    assert not theirs.claim(bid, "000000", LEASE)  # nor claimed again
    others = mine.rows(bid)
    assert others["000001"].status == "pending" and others["000001"].claimed_by is None


def test_completing_needs_running_and_failure_is_redacted(
    session: DestinationSession, plan: BackfillPlan
) -> None:
    state = BackfillState(session, "h:1:a")
    state.seed(plan, "p")
    bid = plan.backfill_id
    assert state.claim(bid, "000001", LEASE)
    with pytest.raises(LeaseLostError):  # claimed, not running
        state.mark_completed(bid, "000001", 1)
    error = "boom postgresql://u:hunter22@db/x " + "x" * 600
    assert state.mark_failed(bid, "000001", error)
    row = state.rows(bid)["000001"]
    assert row.status == "failed" and row.lease_expires_at is None
    assert row.last_error is not None and "hunter22" not in row.last_error
    assert row.last_error.startswith("boom postgresql://u:***@db/x") and len(row.last_error) == 500
    assert not state.mark_failed(bid, "000001", "again")  # no longer held
    assert not BackfillState(session, "h:1:b").mark_failed(bid, "000002", "not claimed")
    retry = BackfillState(session, "h:1:b").claim(bid, "000001", LEASE)
    assert retry and retry.reclaimed is None  # a failed chunk is free to claim
    assert state.rows(bid)["000001"].attempts == 2


def test_an_expired_lease_is_reclaimed_with_its_reason(
    session: DestinationSession, plan: BackfillPlan
) -> None:
    old, new = BackfillState(session, "h:1:a"), BackfillState(session, "h:1:b")
    old.seed(plan, "p")
    bid = plan.backfill_id
    assert old.claim(bid, "000000", timedelta(seconds=-1))
    with capture_logs() as logs:
        took = new.claim(bid, "000000", LEASE)
    assert took and took.reclaimed is not None and took.reclaimed.claimed_by == "h:1:a"
    assert took.reason is not None
    assert took.reason.startswith("holder h:1:a abandoned the chunk: lease expired at ")
    assert took.reason.endswith(" UTC")
    assert [e["event"] for e in logs] == ["backfill.chunk_reclaimed"]
    assert not old.renew(bid, "000000", LEASE)


def test_a_dead_holder_on_this_host_loses_its_chunk_at_once(
    session: DestinationSession, plan: BackfillPlan
) -> None:
    dead_token = f"{HOST}:{_dead_pid()}:ab12"
    dead, new = BackfillState(session, dead_token), BackfillState(session, "h:1:b")
    dead.seed(plan, "p")
    bid = plan.backfill_id
    assert dead.claim(bid, "000000", LEASE)
    dead.mark_running(bid, "000000")
    took = new.claim(bid, "000000", LEASE)
    assert took and took.reason is not None and "is gone" in took.reason
    assert took.reclaimed is not None and took.reclaimed.status == "running"
    live = BackfillState(session, f"{HOST}:1:cd")  # pid 1 runs: its chunk stays
    assert live.claim(bid, "000001", LEASE)
    assert not new.claim(bid, "000001", LEASE)


def test_lease_expiry_is_only_for_held_rows() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    base = dict(
        pipeline_name="p", source_section="s", resource_name=None, backfill_id="b",
        chunk_id="000000", chunk_from=now, chunk_to=now, backfill_from=now, backfill_to=now,
        chunk_size="1d", claimed_by="t", claimed_at=now, started_at=None, completed_at=None,
        records_loaded=None, run_id="r", heartbeat_at=None, attempts=1, last_error=None,
    )  # fmt: skip
    past = now - timedelta(seconds=1)
    assert ChunkRow(status="running", lease_expires_at=past, **base).lease_expired(now)
    assert ChunkRow(status="claimed", lease_expires_at=past, **base).lease_expired(now)
    assert not ChunkRow(status="completed", lease_expires_at=past, **base).lease_expired(now)
    assert not ChunkRow(status="running", lease_expires_at=now, **base).lease_expired(now)
    assert not ChunkRow(status="running", lease_expires_at=None, **base).lease_expired(now)
    assert ChunkRow(status="failed", lease_expires_at=None, **base).as_json()["chunk_from"] == (
        "2026-01-01T00:00:00+00:00"
    )
    assert ChunkStatus.claimed == "claimed"


def test_the_load_lock_is_held_by_one_token_and_a_dead_holder_loses_it(
    session: DestinationSession,
) -> None:
    dead = LoadLock(BackfillState(session, f"{HOST}:{_dead_pid()}:aa"), "daily", LEASE)
    dead.acquire()
    assert dead.held
    mine = LoadLock(BackfillState(session, "h:1:b"), "daily", LEASE)
    with capture_logs() as logs:
        with mine.hold():
            assert mine.held
            now = datetime.now(UTC)
            rival = ("h:1:c", now, now, "daily", "h:1:c", now - timedelta(days=1), "")
            assert session.execute(LOCK_ACQUIRE, *rival) == 0  # held, not expired: no taker
        assert not mine.held
    assert "backfill.load_lock_reclaimed" in [e["event"] for e in logs]
    mine.release()  # not held: nothing happens


def test_a_waiter_gets_the_load_lock_when_it_is_released(session: DestinationSession) -> None:
    import threading

    first = LoadLock(BackfillState(session, "h:1:a"), "daily", LEASE)
    first.acquire()
    threading.Timer(0.3, first.release).start()
    second = LoadLock(BackfillState(session, "h:1:b"), "daily", LEASE)
    started = time.monotonic()
    with capture_logs() as logs:
        second.acquire()
    assert time.monotonic() - started >= 0.2 and second.held
    assert logs[0]["event"].startswith("waiting for the load lock held by h:1:a")
    assert logs[-1]["event"] == "backfill.load_lock_acquired"
    second.release()


def test_an_expired_load_lock_is_taken_over(session: DestinationSession) -> None:
    stale = LoadLock(BackfillState(session, "h:1:a"), "daily", timedelta(seconds=-1))
    stale.acquire()
    fresh = LoadLock(BackfillState(session, "h:1:b"), "daily", LEASE)
    fresh.acquire()
    assert fresh.held
    fresh.release()


def test_the_keeper_renews_the_chunk_and_the_lock(
    session: DestinationSession, plan: BackfillPlan
) -> None:
    state = BackfillState(session, "h:1:a")
    state.seed(plan, "p")
    bid, term = plan.backfill_id, timedelta(seconds=0.3)
    assert state.claim(bid, "000000", term)
    lock = LoadLock(state, "daily", term)
    lock.acquire()
    first = state.rows(bid)["000000"].lease_expires_at
    keeper = LeaseKeeper(state, term, lock)
    assert keeper.interval == pytest.approx(0.1)
    with keeper.holding(bid, "000000"):
        time.sleep(0.6)
        renewed = state.rows(bid)["000000"]
    assert first is not None and renewed.lease_expires_at is not None
    assert renewed.lease_expires_at > first + timedelta(seconds=0.2)
    assert not keeper.lost.is_set()
    # the lock was renewed too: a rival still cannot take it after the first term
    rival = BackfillState(session, "h:1:z")
    assert not rival.claim(bid, "000000", term)
    with keeper.holding(bid, "000001"):  # never claimed by us: the renewal is refused
        deadline = time.monotonic() + 5
        while not keeper.lost.is_set() and time.monotonic() < deadline:
            time.sleep(0.02)
    assert keeper.lost.is_set()
    keeper.close()
    assert not keeper._thread.is_alive()
    lock.release()
