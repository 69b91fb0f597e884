"""``_dlt_backfills`` beyond the happy path: timestamps every transition stamps, what a broken
destination or a lost lease says, time zones read back, and re-seeding a damaged plan."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from dlt_ops.adapters import (
    Column,
    ColumnType,
    ConnectionTarget,
    DestinationSession,
    Statement,
    TableSpec,
)
from dlt_ops.backfill.plan import BackfillPlan
from dlt_ops.backfill.state import (
    _SEEDED,
    BACKFILLS_TABLE,
    CLAIM,
    COLUMNS,
    SEED,
    TABLE_NAME,
    BackfillState,
    ChunkRow,
)
from dlt_ops.errors import BackfillStateError, LeaseLostError

LEASE = timedelta(minutes=5)
HEALTHY = "Nothing was skipped; re-run the same backfill once the destination is healthy."


@pytest.fixture
def session(tmp_path: Path) -> Iterator[DestinationSession]:
    from dltops_duckdb.adapter import DuckDBAdapter

    target = ConnectionTarget("duckdb", "ds", tmp_path, credentials="bf.duckdb")
    opened = DestinationSession.open(DuckDBAdapter(), target)
    yield opened
    opened.close()


@pytest.fixture
def plan() -> BackfillPlan:
    return BackfillPlan.build("daily", "2026-01-01T00:00:00Z", "2026-01-03T00:00:00Z", "1d")


def test_every_transition_stamps_its_times(session: DestinationSession, plan: BackfillPlan) -> None:
    state, bid = BackfillState(session, "h:1:a"), plan.backfill_id
    state.seed(plan, "p")
    state.claim(bid, "000000", LEASE)
    claimed = state.rows(bid)["000000"]
    assert claimed.heartbeat_at is not None and claimed.heartbeat_at == claimed.claimed_at
    state.mark_running(bid, "000000")
    running = state.rows(bid)["000000"]
    assert running.started_at is not None and running.heartbeat_at == running.started_at
    assert running.started_at >= claimed.claimed_at  # type: ignore[operator]
    assert state.renew(bid, "000000", LEASE)
    renewed = state.rows(bid)["000000"]
    assert renewed.heartbeat_at is not None and renewed.heartbeat_at >= running.heartbeat_at  # type: ignore[operator]
    assert renewed.lease_expires_at is not None
    assert renewed.lease_expires_at >= renewed.heartbeat_at + LEASE - timedelta(seconds=1)
    state.mark_completed(bid, "000000", 7)
    done = state.rows(bid)["000000"]
    assert done.completed_at is not None and done.heartbeat_at == done.completed_at
    state.claim(bid, "000001", LEASE)
    state.mark_running(bid, "000001")
    assert state.mark_failed(bid, "000001", "boom")  # a running chunk can fail too
    failed = state.rows(bid)["000001"]
    assert failed.status == "failed" and failed.completed_at is not None
    again = BackfillState(session, "h:1:b")
    assert again.claim(bid, "000001", LEASE)
    retried = again.rows(bid)["000001"]
    assert retried.completed_at is None and retried.started_at is None  # a fresh attempt


def test_a_lost_lease_says_which_step_and_why(
    session: DestinationSession, plan: BackfillPlan
) -> None:
    state, other, bid = (
        BackfillState(session, "h:1:a"),
        BackfillState(session, "h:1:b"),
        plan.backfill_id,
    )
    state.seed(plan, "p")
    state.claim(bid, "000000", LEASE)
    expected = (
        "could not mark chunk 000000 {}: this worker (h:1:b) no longer holds the chunk; its "
        "lease expired and another worker reclaimed it."
    )
    with pytest.raises(LeaseLostError) as running:
        other.mark_running(bid, "000000")
    assert str(running.value) == expected.format("running")
    state.mark_running(bid, "000000")
    with pytest.raises(LeaseLostError) as completed:
        other.mark_completed(bid, "000000", 1)
    assert str(completed.value) == expected.format("completed")


def test_a_broken_destination_names_the_step(session: DestinationSession, plan: BackfillPlan,
                                             tmp_path: Path) -> None:  # fmt: skip
    from dltops_duckdb.adapter import DuckDBAdapter

    target = ConnectionTarget("duckdb", "ds", tmp_path, credentials="bf.duckdb")
    broken = DestinationSession.open(DuckDBAdapter(), target)
    BackfillState(broken, "h:1:a").seed(plan, "p")
    broken.close()
    state, bid = BackfillState(broken, "h:1:a"), plan.backfill_id
    cases = [
        (lambda: state.mark_failed(bid, "000000", "x"), "could not mark chunk 000000 failed in "
         "_dlt_backfills: duckdb statement failed"),
        (lambda: state.renew(bid, "000000", LEASE), "could not renew the lease on chunk 000000 "
         "in _dlt_backfills: duckdb statement failed"),
        (lambda: state.mark_running(bid, "000000"), "could not mark chunk 000000 running in"),
        (lambda: state.mark_completed(bid, "000000", 1), "could not mark chunk 000000 completed"),
        (lambda: state.rows(bid), "could not read _dlt_backfills: duckdb statement failed"),
    ]  # fmt: skip
    for call, start in cases:
        with pytest.raises(BackfillStateError) as caught:
            call()
        message = str(caught.value)
        assert message.startswith(start), message
        if "read" not in start:
            assert message.endswith(HEALTHY), message


def test_table_checks_on_a_broken_destination(tmp_path: Path) -> None:
    from dltops_duckdb.adapter import DuckDBAdapter

    target = ConnectionTarget("duckdb", "ds", tmp_path, credentials="gone.duckdb")
    broken = DestinationSession.open(DuckDBAdapter(), target)
    broken.close()
    state = BackfillState(broken, "h:1:a")
    with pytest.raises(BackfillStateError, match=r"^could not inspect _dlt_backfills: duckdb"):
        state.exists()
    with pytest.raises(BackfillStateError, match=r"^could not create _dlt_backfills: duckdb"):
        state.ensure_table()


def test_timestamps_read_back_in_utc_whatever_the_driver_returns() -> None:
    naive = datetime(2026, 1, 1, 12)
    plus2 = datetime(2026, 1, 1, 14, tzinfo=timezone(timedelta(hours=2)))
    values = dict.fromkeys(COLUMNS)
    values.update(pipeline_name="p", source_section="s", backfill_id="b", chunk_id="000000",
                  chunk_from=naive, chunk_to=plus2, backfill_from=naive, backfill_to=plus2,
                  chunk_size="1d", status="pending", run_id="r", attempts="2",
                  records_loaded="5")  # fmt: skip
    row = ChunkRow.from_row(tuple(values[c] for c in COLUMNS))
    noon = datetime(2026, 1, 1, 12, tzinfo=UTC)
    assert row.chunk_from == noon and row.chunk_from.tzinfo is UTC
    assert row.chunk_to == noon and row.chunk_to.tzinfo is UTC
    assert (row.attempts, row.records_loaded, row.claimed_at) == (2, 5, None)
    with pytest.raises(ValueError):
        ChunkRow.from_row(tuple(values[c] for c in COLUMNS)[:-1])


def test_a_damaged_plan_is_seeded_again_and_an_unknown_chunk_is_no_claim(
    session: DestinationSession, plan: BackfillPlan
) -> None:
    state, bid = BackfillState(session, "h:1:a"), plan.backfill_id
    state.seed(plan, "p")
    session.execute(Statement("DELETE FROM {_dlt_backfills} WHERE chunk_id = ?"), "000001")
    assert list(state.rows(bid)) == ["000000"]
    assert list(state.seed(plan, "p")) == ["000000", "000001"]
    assert not state.claim(bid, "999999", LEASE)


def test_a_scoped_plan_matches_its_own_rows_and_says_what_differs(
    session: DestinationSession,
) -> None:
    scoped = BackfillPlan.build(
        "daily", "2026-01-01T00:00:00Z", "2026-01-03T00:00:00Z", "1d", resources=["b", "a"]
    )
    state = BackfillState(session, "h:1:a")
    rows = state.seed(scoped, "p")
    assert rows["000000"].resource_name == "a,b"
    BackfillState.verify(scoped, rows.values())
    wider = BackfillPlan.build(
        "other", "2026-01-02T00:00:00Z", "2026-01-04T00:00:00Z", "1d", resources=["b", "a"]
    )
    with pytest.raises(BackfillStateError) as caught:
        BackfillState.verify(wider, rows.values())
    assert str(caught.value) == (
        f"backfill {wider.backfill_id} exists with different inputs: stored (daily, "
        "2026-01-01T00:00:00+00:00, 2026-01-03T00:00:00+00:00, 1d, resources=a,b), got (other, "
        "2026-01-02T00:00:00+00:00, 2026-01-04T00:00:00+00:00, 1d, resources=a,b). Inspect it "
        f"with `dlt-ops backfill show {wider.backfill_id}`."
    )


def test_a_reclaim_is_logged_with_its_chunk_and_reason(session: DestinationSession,
                                                       plan: BackfillPlan) -> None:  # fmt: skip
    old, new, bid = (
        BackfillState(session, "h:1:a"),
        BackfillState(session, "h:1:b"),
        plan.backfill_id,
    )
    old.seed(plan, "p")
    old.claim(bid, "000000", timedelta(seconds=-1))
    with capture_logs() as logs:
        took = new.claim(bid, "000000", LEASE)
    assert logs == [
        {"event": "backfill.chunk_reclaimed", "chunk_id": "000000", "reason": took.reason,
         "log_level": "warning"}
    ]  # fmt: skip
    with capture_logs() as quiet:
        assert not old.claim(bid, "000000", LEASE)  # lost: nothing reclaimed, nothing logged
    assert quiet == []


def test_a_naive_timestamp_is_utc_not_local_time(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        values = dict.fromkeys(COLUMNS)
        noon = datetime(2026, 1, 1, 12)
        values.update(pipeline_name="p", source_section="s", backfill_id="b", chunk_id="0",
                      chunk_from=noon, chunk_to=noon, backfill_from=noon, backfill_to=noon,
                      chunk_size="1d", status="pending", run_id="r", attempts=0)  # fmt: skip
        row = ChunkRow.from_row(tuple(values[c] for c in COLUMNS))
        assert row.chunk_from == datetime(2026, 1, 1, 12, tzinfo=UTC)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


class _Interleaved(DestinationSession):
    """The real session, where another worker's step runs just before one statement (once):
    the interleaving of a race, made deterministic. The step may raise what the engine would."""

    def __init__(self, session: DestinationSession, stmt: Statement, step: Callable[[], None]):
        super().__init__(session.adapter, session.client, session.dataset)
        self._stmt = stmt
        self._step: Callable[[], None] | None = step

    def execute(self, stmt: Statement, *params: Any) -> int:
        if stmt is self._stmt and self._step is not None:
            step, self._step = self._step, None
            step()
        return super().execute(stmt, *params)


class _DroppingWrites(DestinationSession):
    """A destination that acknowledges the seed's inserts and stores none of them."""

    def execute(self, stmt: Statement, *params: Any) -> int:
        return 0 if stmt is SEED else super().execute(stmt, *params)


def test_a_seeder_that_loses_the_insert_race_keeps_the_winners_rows(
    session: DestinationSession, plan: BackfillPlan
) -> None:
    bid = plan.backfill_id
    insert = Statement(f"INSERT INTO {{_dlt_backfills}} ({_SEEDED}) VALUES ({', '.join('?' * 13)})")

    def rival_commits_first() -> None:
        winner = BackfillState(session, "h:2:b").seed(plan, "p")
        row = winner["000000"]
        # our insert then meets the rival's row on the unique key, as it would mid-statement
        values = (row.chunk_from, row.chunk_to, row.backfill_from, row.backfill_to)
        session.execute(insert, "p", "daily", None, bid, "000000", *values, "1d", "pending",
                        row.run_id, 0)  # fmt: skip

    state = BackfillState(_Interleaved(session, SEED, rival_commits_first), "h:1:a")
    with capture_logs() as logs:
        rows = state.seed(plan, "p")
    assert list(rows) == ["000000", "000001"] and len(state.all_rows()) == 2
    assert logs == [{"event": "backfill.seed_raced", "chunk_id": "000000", "log_level": "debug"}]


def test_a_refused_seed_names_the_chunk_and_the_engines_error(
    session: DestinationSession, plan: BackfillPlan
) -> None:
    # a table whose chunk_size is a number: the engine refuses every seeded row ('1d')
    columns = tuple(
        Column(c.name, ColumnType.BIGINT, c.nullable) if c.name == "chunk_size" else c
        for c in BACKFILLS_TABLE.columns
    )
    session.ensure_table(TableSpec(TABLE_NAME, columns, unique=BACKFILLS_TABLE.unique))
    with pytest.raises(BackfillStateError) as caught:
        BackfillState(session, "h:1:a").seed(plan, "p")
    message = str(caught.value)
    assert message.startswith(
        f"could not seed chunk 000000 of backfill {plan.backfill_id} in _dlt_backfills: duckdb"
    ), message
    assert BackfillState(session, "h:1:a").all_rows() == []


def test_writes_the_destination_dropped_are_an_error_naming_five_chunks(
    session: DestinationSession,
) -> None:
    week = BackfillPlan.build("daily", "2026-01-01T00:00:00Z", "2026-01-08T00:00:00Z", "1d")
    dropping = _DroppingWrites(session.adapter, session.client, session.dataset)
    with pytest.raises(BackfillStateError) as caught:
        BackfillState(dropping, "h:1:a").seed(week, "p")
    assert str(caught.value) == (
        f"seeding backfill {week.backfill_id} left chunk(s) 000000, 000001, 000002, 000003, "
        "000004 without a row in _dlt_backfills; the destination dropped writes."
    )


def test_a_plan_whose_stored_rows_differ_is_refused_before_anything_is_written(
    session: DestinationSession, plan: BackfillPlan
) -> None:
    state, bid = BackfillState(session, "h:1:a"), plan.backfill_id
    state.seed(plan, "p")
    session.execute(Statement("DELETE FROM {_dlt_backfills} WHERE chunk_id = ?"), "000001")
    session.execute(Statement("UPDATE {_dlt_backfills} SET chunk_size = ?"), "2d")  # damaged
    with pytest.raises(BackfillStateError, match="exists with different inputs"):
        state.seed(plan, "p")
    assert list(state.rows(bid)) == ["000000"]  # the missing chunk was not seeded


def test_a_claim_the_destination_fails_names_the_step(
    session: DestinationSession, plan: BackfillPlan
) -> None:
    BackfillState(session, "h:1:a").seed(plan, "p")
    dropped = _Interleaved(session, CLAIM, session.close)  # the connection goes mid-claim
    with pytest.raises(BackfillStateError) as caught:
        BackfillState(dropped, "h:1:a").claim(plan.backfill_id, "000000", LEASE)
    message = str(caught.value)
    assert message.startswith("could not claim chunk 000000 in _dlt_backfills: duckdb"), message
    assert message.endswith(HEALTHY), message


def test_a_reclaim_lost_to_a_faster_worker_is_not_logged_as_ours(
    session: DestinationSession, plan: BackfillPlan
) -> None:
    bid = plan.backfill_id
    BackfillState(session, "h:1:a").seed(plan, "p")
    BackfillState(session, "h:1:a").claim(bid, "000000", timedelta(seconds=-1))  # then dies
    faster = BackfillState(session, "h:1:c")

    def faster_reclaims_first() -> None:
        assert faster.claim(bid, "000000", LEASE)

    slower = BackfillState(_Interleaved(session, CLAIM, faster_reclaims_first), "h:1:b")
    with capture_logs() as logs:
        lost = slower.claim(bid, "000000", LEASE)
    assert not lost
    assert [e["event"] for e in logs] == ["backfill.chunk_reclaimed"]  # the faster one's only
    assert slower.rows(bid)["000000"].claimed_by == "h:1:c"


def test_duplicate_rows_where_the_engine_cannot_refuse_them_are_logged(
    session: DestinationSession, plan: BackfillPlan
) -> None:
    # an engine that cannot enforce (backfill_id, chunk_id) unique, as BigQuery
    session.ensure_table(TableSpec(TABLE_NAME, BACKFILLS_TABLE.columns))
    state, bid = BackfillState(session, "h:1:a"), plan.backfill_id
    state.seed(plan, "p")
    session.execute(
        Statement("INSERT INTO {_dlt_backfills} SELECT * FROM {_dlt_backfills} WHERE chunk_id = ?"),
        "000000",
    )
    with capture_logs() as logs:
        assert state.claim(bid, "000000", LEASE)
    assert logs == [
        {"event": "backfill.duplicate_rows", "chunk_id": "000000", "rows": 2,
         "log_level": "warning"}
    ]  # fmt: skip


class _CountedReads(DestinationSession):
    """The real session, counting the queries sent through it."""

    def __init__(self, session: DestinationSession) -> None:
        super().__init__(session.adapter, session.client, session.dataset)
        self.reads = 0

    def query(self, stmt: Statement, *params: Any) -> list[tuple[Any, ...]]:
        self.reads += 1
        return super().query(stmt, *params)


def test_a_claim_handed_the_row_just_read_reads_nothing_and_decides_on_it(
    session: DestinationSession, plan: BackfillPlan
) -> None:
    """A chunk task reads its row once; the claim reuses it: no second read, the same
    verdicts (a free chunk is won, a dead holder is reclaimed with its reason, a live holder
    keeps it), and a row of another chunk is not taken for this one's."""
    bid = plan.backfill_id
    BackfillState(session, "h:1:seed").seed(plan, "p")
    counted = _CountedReads(session)
    state = BackfillState(counted, "h:1:b")
    free = state.rows(bid)
    counted.reads = 0
    assert state.claim(bid, "000000", LEASE, known=free["000000"])
    assert counted.reads == 0
    # a holder whose lease expired: the row handed over says so, and the claim acts on it
    assert BackfillState(session, "h:1:a").claim(bid, "000001", timedelta(seconds=-1))
    expired = state.rows(bid)["000001"]
    counted.reads = 0
    took = state.claim(bid, "000001", LEASE, known=expired)
    assert counted.reads == 0 and took and took.reclaimed == expired
    assert took.reason is not None and "h:1:a abandoned the chunk: lease expired" in took.reason
    # a live holder keeps its chunk, whatever row the claim was handed
    rival = BackfillState(session, "h:1:c")
    assert not rival.claim(bid, "000001", LEASE, known=free["000001"])
    # another chunk's row is no row of this chunk: read afresh
    counted.reads = 0
    assert not state.claim(bid, "000000", LEASE, known=free["000001"])
    assert counted.reads == 1
