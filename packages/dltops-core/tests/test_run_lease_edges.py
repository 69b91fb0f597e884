"""The run lease's edges: what each event says, the lease term, time zones, a lock file that
cannot be made, and a destination that refuses the lease's writes."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from dlt_ops.adapters import ConnectionTarget, DestinationSession, Statement
from dlt_ops.config.loader import ProjectConfig
from dlt_ops.errors import DestinationError
from dlt_ops.project.run_locks import read_note
from dlt_ops.runner.lease import (
    ACQUIRE,
    HOLDER,
    FileLease,
    LeaseBusyError,
    LeaseFileError,
    LeaseHolder,
    TableLease,
    _acquire,
    _Renewer,
    lease_term,
)

HOST = socket.gethostname()


def _open(tmp_path: Path, read_only: bool = False) -> DestinationSession:
    from dltops_duckdb.adapter import DuckDBAdapter

    target = ConnectionTarget(
        "duckdb", "ds", tmp_path, credentials="lease.duckdb", read_only=read_only
    )
    return DestinationSession.open(DuckDBAdapter(), target)


@pytest.fixture
def session(tmp_path: Path) -> Iterator[DestinationSession]:
    opened = _open(tmp_path)
    yield opened
    opened.close()


def lease(session: DestinationSession, token: str, run_id: str = "run-a",
          term: timedelta = timedelta(minutes=5), name: str = "src") -> TableLease:  # fmt: skip
    made = TableLease(session, name, token, term, run_id)
    made._prepare()
    return made


def test_the_term_is_three_heartbeats(tmp_path: Path) -> None:
    config = ProjectConfig(root=tmp_path, path=tmp_path / "config.toml", heartbeat_seconds=7)
    assert lease_term(config) == timedelta(seconds=21)


def test_expiry_reads_in_utc_whatever_the_local_zone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        at = datetime(2026, 1, 2, 3, 4, 5)
        want = "its lease expires at 2026-01-02T03:04:05Z unless renewed"
        assert LeaseHolder("h", expires_at=at).until() == want  # naive: stored as UTC
        tokyo = at.replace(tzinfo=UTC).astimezone(timezone(timedelta(hours=9)))
        assert LeaseHolder("h", expires_at=tokyo).until() == want
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_the_row_keeps_when_it_was_taken_and_reads_odd_rows(session: DestinationSession) -> None:
    held = lease(session, f"{HOST}:1:aa")
    before = datetime.now(UTC)
    assert held.try_acquire() is None
    taken = session.query(Statement("SELECT acquired_at FROM {_dlt_ops_leases}"))[0][0]
    taken = taken if taken.tzinfo else taken.replace(tzinfo=UTC)
    assert before - timedelta(seconds=1) <= taken <= datetime.now(UTC) + timedelta(seconds=1)
    session.execute(Statement("UPDATE {_dlt_ops_leases} SET pid = NULL, run_id = NULL"))
    holder = held.holder()
    assert holder is not None and holder.holder == held.token  # still held
    assert (holder.pid, holder.run_id) == (None, None)


def test_a_reclaim_and_a_lost_or_failed_renewal_say_what_happened(
    session: DestinationSession, tmp_path: Path
) -> None:
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    dead = lease(session, f"{HOST}:{proc.pid}:aa", "run-dead")
    assert dead.try_acquire() is None
    with capture_logs() as logs:
        assert lease(session, f"{HOST}:1:bb", "run-new").try_acquire() is None
    assert logs == [{
        "event": "lease.reclaimed", "holder": dead.token, "run_id": "run-dead",
        "reason": f"its process (pid {proc.pid} on {HOST}) is gone", "log_level": "warning",
    }]  # fmt: skip
    lost = lease(session, f"{HOST}:1:cc", term=timedelta(seconds=0.15))
    with capture_logs() as logs:
        renewer = _Renewer(lost)  # never acquired: the renewal finds no row of ours
        time.sleep(0.3)
        renewer.close()
    assert {"event": "lease.lost", "lease": "src", "holder": lost.token,
            "log_level": "error"} in logs  # fmt: skip
    other = _open(tmp_path / "other")
    broken = lease(other, f"{HOST}:1:dd", term=timedelta(seconds=0.15))
    other.close()
    with capture_logs() as logs:
        renewer = _Renewer(broken)
        time.sleep(0.3)
        renewer.close()
    failed = [e for e in logs if e["event"] == "lease.renew_failed"]
    assert failed and "Connection already closed" in failed[0]["error"]


def test_a_release_the_destination_refuses_is_only_logged(tmp_path: Path) -> None:
    other = _open(tmp_path)
    held = lease(other, f"{HOST}:1:aa")
    assert held.try_acquire() is None
    other.close()
    with capture_logs() as logs:
        held.release()
    assert [e["event"] for e in logs] == ["lease.release_failed"]
    assert "Connection already closed" in logs[0]["error"]
    assert not held.held


def test_a_read_only_destination_with_the_row_already_there_is_fine(tmp_path: Path) -> None:
    writable = _open(tmp_path)
    lease(writable, "h:1:a")
    writable.close()
    reader = _open(tmp_path, read_only=True)
    try:
        assert lease(reader, "h:1:b").holder() is None  # the seeded row is enough
        with pytest.raises(DestinationError):
            lease(reader, "h:1:b", name="never_seeded")
    finally:
        reader.close()


def test_the_lock_file_is_made_with_its_folders_and_notes_the_trigger(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "c" / "src.lock"
    held = FileLease(path, f"{HOST}:1:aa", "run-a", "cron")
    assert held.try_acquire() is None
    note = read_note(path)
    assert (note.holder, note.run_id, note.trigger) == (held.token, "run-a", "cron")
    held.release()
    FileLease(path, "h:1:b", "run-b").release()  # never acquired: nothing to let go


def test_a_lock_file_that_cannot_be_made_refuses_the_run(tmp_path: Path) -> None:
    (tmp_path / "locks").write_text("a file where the folder should be")
    path = tmp_path / "locks" / "src.lock"
    with pytest.raises(LeaseFileError, match=rf"^could not open the run lock {path}: "):
        FileLease(path, "h:1:a", "run-a").try_acquire()


def test_waiting_and_getting_the_lease_are_logged_with_the_source(tmp_path: Path) -> None:
    import threading

    path = tmp_path / "src.lock"
    holder = FileLease(path, "h:1:a", "run-a")
    assert holder.try_acquire() is None
    with pytest.raises(LeaseBusyError, match="^source 'src' is already running: run run-a"):
        _acquire(FileLease(path, "h:2:b", "run-b"), "src", None)
    threading.Timer(0.3, holder.release).start()
    waiter = FileLease(path, "h:2:b", "run-b")
    started = time.monotonic()
    with capture_logs() as logs:
        _acquire(waiter, "src", 30)
    took = time.monotonic() - started
    assert logs[0]["source"] == "src" and logs[0]["holder"] == "h:1:a"
    done = logs[-1]
    assert done["event"] == "lease.acquired" and done["source"] == "src"
    assert abs(done["waited_s"] - took) <= 0.15 and done["waited_s"] == round(done["waited_s"], 1)
    waiter.release()


class _Interleaved(DestinationSession):
    """The real session, where other runs' steps run just before the n-th use of a statement:
    the interleavings of a race, made deterministic (``None`` in a queue: nothing that time)."""

    def __init__(self, session: DestinationSession, steps: dict[Statement, list[Any]]) -> None:
        super().__init__(session.adapter, session.client, session.dataset)
        self._steps = steps

    def _before(self, stmt: Statement) -> None:
        queue = self._steps.get(stmt)
        step = queue.pop(0) if queue else None
        if step is not None:
            step()

    def execute(self, stmt: Statement, *params: Any) -> int:
        self._before(stmt)
        return super().execute(stmt, *params)

    def query(self, stmt: Statement, *params: Any) -> list[tuple[Any, ...]]:
        self._before(stmt)
        return super().query(stmt, *params)


def _dead_token() -> str:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return f"{HOST}:{proc.pid}:dd"


def test_a_lease_released_while_we_look_is_taken_on_the_second_try(
    session: DestinationSession,
) -> None:
    rival = lease(session, f"elsewhere-{HOST}:1:bb", "run-b")
    assert rival.try_acquire() is None
    ours = TableLease(_Interleaved(session, {HOLDER: [rival.release]}), "src", "h:1:a",
                      timedelta(minutes=5), "run-a")  # fmt: skip
    assert ours.try_acquire() is None and ours.held
    found = ours.holder()
    assert found is not None and found.holder == "h:1:a"


def test_a_second_dead_holder_in_a_row_is_named_not_taken(session: DestinationSession) -> None:
    first = lease(session, _dead_token(), "run-dead-1")
    assert first.try_acquire() is None
    second = lease(session, _dead_token(), "run-dead-2")

    def second_reclaims_first() -> None:  # ...and dies too, before our second try
        assert second.try_acquire() is None

    ours = TableLease(_Interleaved(session, {ACQUIRE: [None, second_reclaims_first]}), "src",
                      "h:1:a", timedelta(minutes=5), "run-a")  # fmt: skip
    busy = ours.try_acquire()
    assert busy is not None and (busy.holder, busy.run_id) == (second.token, "run-dead-2")
    assert not ours.held


def test_a_lease_that_changes_hands_at_every_look_is_busy_and_says_so(
    session: DestinationSession,
) -> None:
    rival = lease(session, f"elsewhere-{HOST}:1:bb", "run-b")
    assert rival.try_acquire() is None

    def retake() -> None:
        assert rival.try_acquire() is None

    steps: dict[Statement, list[Any]] = {ACQUIRE: [None, retake], HOLDER: [rival.release] * 2}
    ours = TableLease(_Interleaved(session, steps), "src", "h:1:a", timedelta(minutes=5), "run-a")
    busy = ours.try_acquire()
    assert busy is not None and not ours.held
    assert busy.describe() == "holder h:1:a"  # nobody to name: the refusal still reads
