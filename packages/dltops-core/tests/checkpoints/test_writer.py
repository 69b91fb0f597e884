"""The checkpoint writer: every row lands, rows that queue up share one commit, and a flush
never waits out the group-commit delay."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from dlt_ops.adapters import TableSpec
from dlt_ops.checkpoints import writer as writer_module
from dlt_ops.checkpoints.table import table_spec
from dlt_ops.checkpoints.writer import CheckpointWriter


class RecordingSession:
    """Stands in for a destination session: records each statement's rows (one commit each)."""

    def __init__(self) -> None:
        self.batches: list[list[Any]] = []
        self.first_commit_done = threading.Event()

    def insert_rows(self, spec: TableSpec, rows: list[tuple[Any, ...]]) -> int:
        self.batches.append([value for row in rows for value in row])
        self.first_commit_done.set()
        return len(rows)


def _writer(session: RecordingSession) -> CheckpointWriter:
    return CheckpointWriter(session, table_spec("_dlt_custom_checkpoints"), "[events]", "events")  # type: ignore[arg-type]


def _past_first_commit(session: RecordingSession, first: int = 1) -> CheckpointWriter:
    """A writer whose first row (``(first,)``) has landed: the first row goes at once, so
    rows submitted from here on wait out the group-commit delay."""
    writer = _writer(session)
    writer.submit((first,), 10, 100, f"v{first}")
    assert session.first_commit_done.wait(30)
    return writer


def test_rows_queued_after_a_commit_share_the_next_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # a delay far longer than the test: only flush() can make the second batch land
    monkeypatch.setattr(writer_module, "GROUP_S", 3600.0)
    session = RecordingSession()
    writer = _past_first_commit(session)
    for page in range(20, 70, 10):
        writer.submit((page,), page, page * 10, f"v{page}")
    assert writer.flush(timeout=30)  # cuts the delay: returns as soon as the rows landed
    assert session.batches == [[1], [20, 30, 40, 50, 60]]
    assert writer.written == 6 and writer.failed == 0
    writer.close()


def test_close_writes_what_is_still_queued(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writer_module, "GROUP_S", 3600.0)
    session = RecordingSession()
    writer = _past_first_commit(session)
    writer.submit((2,), 20, 200, "v2")
    writer.close()
    assert session.batches == [[1], [2]] and writer.written == 2


class CountingCondition(threading.Condition):
    """A condition that counts single wake-ups (``notify``) sent to the writer."""

    def __init__(self) -> None:
        super().__init__()
        self.wakes = 0

    def notify(self, n: int = 1) -> None:
        self.wakes += 1
        super().notify(n)


def test_rows_queued_during_the_group_wait_do_not_wake_the_writer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # every wake-up takes the GIL from the extract loop; a writer already waiting out the
    # group-commit delay takes the rows queued meanwhile without being woken for each
    monkeypatch.setattr(writer_module, "GROUP_S", 3600.0)
    session = RecordingSession()
    writer = _writer(session)
    cond = writer._cond = CountingCondition()
    writer.submit((1,), 10, 100, "v1")
    assert session.first_commit_done.wait(30)
    assert writer.flush(timeout=30)
    wakes_before = cond.wakes
    for page in range(20, 220, 10):
        writer.submit((page,), page, page * 10, f"v{page}")
    assert cond.wakes == wakes_before + 1  # the first row of the batch only
    assert writer.flush(timeout=30)
    assert session.batches[1] == list(range(20, 220, 10))
    writer.close()


def test_the_wait_after_a_commit_scales_with_what_the_commit_took() -> None:
    share = writer_module.WRITE_SHARE
    assert writer_module.commit_gap(0.0) == writer_module.GROUP_S  # a fast commit: the floor
    slow = 10 * writer_module.GROUP_S * share  # a commit slow enough to lift the wait
    assert writer_module.commit_gap(slow) == pytest.approx(slow / share)
    assert writer_module.commit_gap(3600.0) == writer_module.GROUP_MAX_S  # bounded: a kill
    # loses at most GROUP_MAX_S of progress


class SlowSession(RecordingSession):
    """A destination whose every statement takes ``seconds`` (a warehouse, a busy host)."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds
        self.second_commit_done = threading.Event()

    def insert_rows(self, spec: TableSpec, rows: list[tuple[Any, ...]]) -> int:
        took = threading.Event()
        took.wait(self.seconds)  # the statement's own duration, not a wait for the test
        if self.batches:
            self.second_commit_done.set()
        return super().insert_rows(spec, rows)


def test_rows_after_a_slow_commit_wait_longer(monkeypatch: pytest.MonkeyPatch) -> None:
    # a 50 ms commit at a 1 % share: rows queued after it wait ~5 s, not the 250 ms floor,
    # so a destination whose statements are slow is not kept busy by the writer
    monkeypatch.setattr(writer_module, "WRITE_SHARE", 0.01, raising=False)
    monkeypatch.setattr(writer_module, "GROUP_MAX_S", 3600.0, raising=False)
    session = SlowSession(0.05)
    writer = _past_first_commit(session)
    writer.submit((2,), 20, 200, "v2")
    writer.submit((3,), 30, 300, "v3")
    # with the fixed 250 ms floor the second commit would land well inside a second
    assert not session.second_commit_done.wait(1.0)
    assert writer.flush(timeout=30)  # flush still cuts the longer wait
    assert session.batches == [[1], [2, 3]]
    writer.close()


def test_a_long_queue_lands_in_statements_of_bounded_size(monkeypatch: pytest.MonkeyPatch) -> None:
    # engines bound a statement's parameters: a long wait must not make one giant INSERT
    monkeypatch.setattr(writer_module, "GROUP_S", 3600.0)
    session = RecordingSession()
    writer = _past_first_commit(session, first=0)
    queued = 2 * writer_module.MAX_ROWS + 7
    for page in range(1, queued + 1):
        writer.submit((page,), page, page, f"v{page}")
    assert writer.flush(timeout=30)
    sizes = [len(batch) for batch in session.batches[1:]]
    assert sizes == [writer_module.MAX_ROWS, writer_module.MAX_ROWS, 7]
    assert [v for batch in session.batches for v in batch] == list(range(queued + 1))
    assert writer.written == queued + 1
    writer.close()


class FailingOnce(RecordingSession):
    """A destination whose first statement fails, quoting a password."""

    def insert_rows(self, spec: TableSpec, rows: list[tuple[Any, ...]]) -> int:
        if not self.first_commit_done.is_set():
            self.first_commit_done.set()
            raise RuntimeError("cannot reach postgresql://app:hunter22@db/x")
        return super().insert_rows(spec, rows)


def test_every_saved_and_every_failed_checkpoint_is_logged() -> None:
    from structlog.testing import capture_logs

    session = FailingOnce()
    writer = _writer(session)
    with capture_logs() as logs:
        writer.submit((1,), 10, 100, "v1")
        assert writer.flush(timeout=30)
        writer.submit((2,), 20, 200, "v2")  # the writer carries on after a failed write
        assert writer.flush(timeout=30)
        writer.close()
    writer.close()  # closing twice is harmless
    assert (writer.failed, writer.written) == (1, 1)
    assert session.batches == [[2]]
    assert [e for e in logs if e["log_level"] in ("error", "info")] == [
        {
            "event": "[events] Failed to save checkpoint at page 10 (cannot reach "
            "postgresql://app:***@db/x). The run continues; a resume would restart from the "
            "last checkpoint that did land.",
            "resource": "events", "page": 10, "log_level": "error",
        },
        {
            "event": "[events] Checkpoint saved: page 20, 200 records, value: v2",
            "resource": "events", "page": 20, "records": 200, "checkpoint_value": "v2",
            "log_level": "info",
        },
    ]  # fmt: skip


def test_a_writer_that_never_got_a_row_has_nothing_to_flush_or_close() -> None:
    session = RecordingSession()
    writer = _writer(session)
    assert writer.flush(timeout=0.01)  # nothing submitted: drained at once
    writer.close()
    assert session.batches == [] and writer.written == 0


class TimedSession(RecordingSession):
    """Records when each statement ran (monotonic seconds)."""

    def __init__(self) -> None:
        super().__init__()
        self.at: list[float] = []
        self.second_commit_done, self.third_commit_done = threading.Event(), threading.Event()

    def insert_rows(self, spec: TableSpec, rows: list[tuple[Any, ...]]) -> int:
        import time

        self.at.append(time.monotonic())
        if len(self.at) == 2:
            self.second_commit_done.set()
        if len(self.at) == 3:
            self.third_commit_done.set()
        return super().insert_rows(spec, rows)


def test_a_row_after_a_commit_lands_by_itself_once_the_gap_is_over(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # no flush: the group-commit wait ends on its own, and not before the gap is over
    monkeypatch.setattr(writer_module, "GROUP_S", 0.6)
    session = TimedSession()
    writer = _past_first_commit(session)
    writer.submit((2,), 20, 200, "v2")
    assert session.second_commit_done.wait(10)
    assert session.at[1] - session.at[0] >= 0.6
    assert writer.flush(timeout=30)  # a flush hurries only the rows queued before it
    writer.submit((3,), 30, 300, "v3")
    assert session.third_commit_done.wait(10)
    assert session.at[2] - session.at[1] >= 0.6  # the next row waits out the gap again
    assert session.batches == [[1], [2], [3]]
    writer.close()


class BlockedSession(RecordingSession):
    """A statement that runs until the test lets it finish."""

    def __init__(self) -> None:
        super().__init__()
        self.started, self.release = threading.Event(), threading.Event()

    def insert_rows(self, spec: TableSpec, rows: list[tuple[Any, ...]]) -> int:
        self.started.set()
        self.release.wait(30)
        return super().insert_rows(spec, rows)


def test_flush_waits_for_a_write_already_in_flight() -> None:
    session = BlockedSession()
    writer = _writer(session)
    writer.submit((1,), 10, 100, "v1")
    assert session.started.wait(30)  # the writer took the row and is writing it
    assert writer.flush(timeout=0.2) is False  # not landed yet: flush must not say it did
    session.release.set()
    assert writer.flush(timeout=30)
    assert session.batches == [[1]]
    writer.close()


class AlwaysFailing(RecordingSession):
    def insert_rows(self, spec: TableSpec, rows: list[tuple[Any, ...]]) -> int:
        raise OSError("disk full")


def test_every_failed_row_is_counted() -> None:
    writer = _writer(AlwaysFailing())
    for page in (10, 20, 30):
        writer.submit((page,), page, page, f"v{page}")
        assert writer.flush(timeout=30)
    writer.close()
    assert (writer.failed, writer.written) == (3, 0)


def _until(condition: Any, limit: float = 30.0) -> None:
    """Wait (bounded) until ``condition()`` holds: another thread reached a known point."""
    gate = threading.Event()
    for _ in range(int(limit / 0.01)):
        if condition():
            return
        gate.wait(0.01)
    raise AssertionError("condition not reached")


def test_one_flush_giving_up_does_not_slow_another_still_waiting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a gap far longer than the test: only a flush still waiting can make row 2 land
    monkeypatch.setattr(writer_module, "GROUP_S", 3600.0)
    session = BlockedSession()
    writer = _writer(session)
    writer.submit((1,), 10, 100, "v1")
    assert session.started.wait(30)  # row 1 is being written
    landed: list[bool] = []
    waiting = threading.Thread(target=lambda: landed.append(writer.flush(timeout=20)))
    waiting.start()
    _until(lambda: writer._hurry == 1)  # the other caller is waiting in flush
    assert writer.flush(timeout=0.2) is False  # this one gives up
    writer.submit((2,), 20, 200, "v2")  # queued behind the write in flight
    session.release.set()
    waiting.join(40)
    assert landed == [True]  # the waiting flush still hurried row 2 past the gap
    assert session.batches == [[1], [2]]
    writer.close()


class DyingSession(BlockedSession):
    """The writer thread dies inside a write (a BaseException no handler takes)."""

    def insert_rows(self, spec: TableSpec, rows: list[tuple[Any, ...]]) -> int:
        self.started.set()
        self.release.wait(30)
        raise SystemExit("writer thread gone")


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_flush_does_not_wait_for_a_writer_thread_that_died() -> None:
    session = DyingSession()
    writer = _writer(session)
    writer.submit((1,), 10, 100, "v1")
    assert session.started.wait(30)
    writer.submit((2,), 20, 200, "v2")  # left queued: nobody will write it
    session.release.set()
    assert writer._thread is not None
    writer._thread.join(30)
    assert writer.flush(timeout=20)  # returns at once instead of waiting out the timeout
    assert (writer.written, session.batches) == (0, [])
    writer.close()


def test_close_says_so_when_the_writer_did_not_finish_in_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from structlog.testing import capture_logs

    session = BlockedSession()
    writer = _writer(session)
    # close's flush gives up after 0.2 s (60 s in a run), and so does its join
    monkeypatch.setattr(
        writer, "flush", lambda timeout=0.2: CheckpointWriter.flush(writer, timeout)
    )
    monkeypatch.setattr(writer_module, "FLUSH_TIMEOUT_S", 0.2)
    writer.submit((1,), 10, 100, "v1")
    assert session.started.wait(30)
    with capture_logs() as logs:
        writer.close()
    session.release.set()
    assert [e for e in logs if e["log_level"] == "error"] == [
        {"event": "[events] Checkpoint writer did not finish in time", "resource": "events",
         "log_level": "error"},
    ]  # fmt: skip
