"""The backfill heartbeat (``LeaseKeeper``) and the load lock's row, on DuckDB: what a beat says
when the chunk is lost or the destination fails, and a quiet keeper that holds nothing."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from dlt_ops.adapters import ConnectionTarget, DestinationSession, Statement
from dlt_ops.backfill.lease import LeaseKeeper, LoadLock
from dlt_ops.backfill.plan import BackfillPlan
from dlt_ops.backfill.state import BackfillState

TERM = timedelta(seconds=0.3)


def _open(tmp_path: Path) -> DestinationSession:
    from dltops_duckdb.adapter import DuckDBAdapter

    target = ConnectionTarget("duckdb", "ds", tmp_path, credentials="keeper.duckdb")
    return DestinationSession.open(DuckDBAdapter(), target)


@pytest.fixture
def session(tmp_path: Path) -> Iterator[DestinationSession]:
    opened = _open(tmp_path)
    yield opened
    opened.close()


def test_a_keeper_holding_nothing_stays_quiet(session: DestinationSession) -> None:
    keeper = LeaseKeeper(BackfillState(session, "h:1:a"), TERM, None)
    with capture_logs() as logs:
        time.sleep(0.35)
        keeper.close()
    assert logs == [] and not keeper.lost.is_set()


def test_a_lost_chunk_is_logged_with_its_id_and_holder(session: DestinationSession) -> None:
    plan = BackfillPlan.build("daily", "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", "1d")
    state = BackfillState(session, "h:1:a")
    state.seed(plan, "p")
    keeper = LeaseKeeper(state, TERM, None)
    with capture_logs() as logs:
        with keeper.holding(plan.backfill_id, "000000"):  # never claimed: renewal refused
            deadline = time.monotonic() + 5
            while not keeper.lost.is_set() and time.monotonic() < deadline:
                time.sleep(0.02)
        keeper.close()
    assert {"event": "backfill.lease_lost", "chunk_id": "000000", "holder": "h:1:a",
            "log_level": "error"} in logs  # fmt: skip


def test_a_failing_beat_is_a_warning_and_the_next_one_retries(tmp_path: Path) -> None:
    broken = _open(tmp_path)
    state = BackfillState(broken, "h:1:a")
    lock = LoadLock(state, "daily", TERM)
    lock.acquire()
    broken.close()
    keeper = LeaseKeeper(state, TERM, lock)
    with capture_logs() as logs:
        time.sleep(0.35)
        keeper.close()
    failed = [e for e in logs if e["event"] == "backfill.lease_renew_failed"]
    assert len(failed) >= 2  # every beat tries again
    assert "could not renew the load lock" in failed[0]["error"]


def test_the_lock_row_records_when_it_was_taken_and_its_holder_may_take_it_again(
    session: DestinationSession,
) -> None:
    mine = LoadLock(BackfillState(session, "h:1:a"), "daily", timedelta(minutes=5))
    before = datetime.now(UTC)
    mine.acquire()
    taken = session.query(Statement("SELECT acquired_at FROM {_dlt_backfill_locks}"))[0][0]
    taken = taken if taken.tzinfo else taken.replace(tzinfo=UTC)
    assert before - timedelta(seconds=1) <= taken <= datetime.now(UTC) + timedelta(seconds=1)
    again = LoadLock(BackfillState(session, "h:1:a"), "daily", timedelta(minutes=5))
    started = time.monotonic()
    again.acquire()  # the same worker token: no wait for itself
    assert time.monotonic() - started < 0.09 and again.held
    again.release()
