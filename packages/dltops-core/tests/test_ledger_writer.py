"""``LedgerWriter``: every sink gets the start, the heartbeats and the finish; one failing sink
neither stops the others nor the run; the heartbeat keeps a live run's row fresh."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from dlt_ops.ledger.jsonl_sink import JsonlLedgerSink
from dlt_ops.ledger.model import RunRecord, RunStatus
from dlt_ops.ledger.sinks import LedgerQuery, LedgerSinkContext
from dlt_ops.ledger.writer import LedgerWriter
from dlt_ops.testing.ledger_sinks import make_run


class Recording:
    """A sink that keeps every event it was given, in order."""

    def __init__(self) -> None:
        self.events: list[tuple[str, RunRecord]] = []

    def start(self, run: RunRecord) -> None:
        self.events.append(("start", run))

    def heartbeat(self, run: RunRecord) -> None:
        self.events.append(("heartbeat", run))

    def finish(self, run: RunRecord) -> None:
        self.events.append(("finish", run))

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.events]


class Broken:
    """A sink whose every write fails, quoting a password."""

    target = "broken-db"

    def _fail(self, run: RunRecord) -> None:
        raise RuntimeError("cannot reach postgresql://app:hunter22@db/x")

    start = heartbeat = finish = _fail


def jsonl(tmp_path: Path) -> JsonlLedgerSink:
    context = LedgerSinkContext(
        name="jsonl",
        project_root=tmp_path,
        engine="duckdb",
        dataset="ds",
        full_tier=False,
        open_session=lambda: None,  # type: ignore[arg-type,return-value]
        options={},
    )
    return JsonlLedgerSink(context)


def test_every_sink_reads_back_the_finished_run(tmp_path: Path) -> None:
    sink, recording = jsonl(tmp_path), Recording()
    run = make_run("src")
    writer = LedgerWriter([("jsonl", sink), ("rec", recording)], run, heartbeat_seconds=0)
    writer.start()
    final = writer.finish(RunStatus.completed, records_loaded=6, dlt_run_id="load-1")

    assert recording.kinds() == ["start", "finish"]
    assert recording.events[0][1] == run
    stored = sink.read_runs(LedgerQuery(source="src"))
    assert stored == [final]
    assert final.status == "completed" and final.records_loaded == 6
    assert final.dlt_run_id == "load-1"
    assert final.completed_at is not None and final.completed_at == final.heartbeat_at
    assert final.completed_at >= run.started_at
    assert writer.record == final


def test_a_failing_sink_is_logged_redacted_and_the_others_still_get_every_event() -> None:
    recording = Recording()
    writer = LedgerWriter([("bad", Broken()), ("rec", recording)], make_run(), heartbeat_seconds=0)
    with capture_logs() as logs:
        writer.start()
        writer.finish(RunStatus.failed, error_summary="boom")
    assert recording.kinds() == ["start", "finish"]
    errors = [e for e in logs if e["log_level"] == "error"]
    assert [e["event"] for e in errors] == [
        "Failed to write run-start row to broken-db (non-fatal, run continues)",
        "Failed to write run-end row to broken-db (non-fatal, run continues)",
    ]
    assert all(e["sink"] == "bad" and e["run_id"] == writer.record.run_id for e in errors)
    assert errors[0]["error"] == "RuntimeError: cannot reach postgresql://app:***@db/x"


def test_only_a_refused_finish_is_handed_on_with_the_sink_and_the_finished_run() -> None:
    refused: list[tuple[str, RunRecord]] = []
    writer = LedgerWriter(
        [("bad", Broken()), ("rec", Recording())], make_run(), heartbeat_seconds=0,
        refused=lambda name, run: refused.append((name, run)),
    )  # fmt: skip
    writer.start()  # a refused start is only logged: the finish that follows carries the run
    assert refused == []
    writer.finish(RunStatus.failed, error_summary="boom")
    assert [(name, run.status, run.error_summary) for name, run in refused] == [
        ("bad", RunStatus.failed, "boom")
    ]
    assert refused[0][1] is writer.record


def test_a_sink_without_a_target_is_named_by_its_name() -> None:
    class Nameless:
        def start(self, run: RunRecord) -> None:
            raise OSError("disk full")

    writer = LedgerWriter([("nameless", Nameless())], make_run(), heartbeat_seconds=0)
    with capture_logs() as logs:
        writer.start()
    assert logs[0]["event"] == (
        "Failed to write run-start row to nameless (non-fatal, run continues)"
    )


def test_heartbeats_renew_the_row_while_running_and_stop_at_finish() -> None:
    recording = Recording()
    writer = LedgerWriter([("rec", recording)], make_run(), heartbeat_seconds=0.05)
    writer.start()
    deadline = time.monotonic() + 10
    while recording.kinds().count("heartbeat") < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    writer.finish(RunStatus.completed)
    kinds = recording.kinds()
    assert kinds[0] == "start" and kinds[-1] == "finish"
    assert kinds.count("heartbeat") >= 2
    beats = [r.heartbeat_at for k, r in recording.events if k == "heartbeat"]
    assert all(b is not None for b in beats) and beats == sorted(beats)
    assert beats[0] > recording.events[0][1].started_at
    assert all(r.status == "running" for k, r in recording.events if k == "heartbeat")
    time.sleep(0.2)  # the thread is gone: nothing after the finish
    assert recording.kinds() == kinds
    assert writer._thread is not None and not writer._thread.is_alive()


def test_no_heartbeat_thread_when_heartbeats_are_off() -> None:
    recording = Recording()
    writer = LedgerWriter([("rec", recording)], make_run(), heartbeat_seconds=0)
    writer.start()
    time.sleep(0.1)
    assert writer._thread is None
    writer.finish(RunStatus.completed)
    assert recording.kinds() == ["start", "finish"]


def test_the_connection_is_let_go_after_each_write_unless_kept() -> None:
    released: list[int] = []
    writer = LedgerWriter(
        [("rec", Recording())], make_run(), heartbeat_seconds=0,
        release=lambda: released.append(1),
    )  # fmt: skip
    writer.start(keep=True)
    assert released == []
    with writer.borrowed() as sinks:
        assert [name for name, _ in sinks] == ["rec"]
        assert released == []
    assert released == [1]
    writer.finish(RunStatus.completed, keep=True)
    assert released == [1]
    writer.finish(RunStatus.completed)
    assert released == [1, 1]


def test_a_release_that_fails_is_only_logged() -> None:
    def release() -> None:
        raise OSError("already closed token=abcdef123")

    recording = Recording()
    writer = LedgerWriter([("rec", recording)], make_run(), heartbeat_seconds=0, release=release)
    with capture_logs() as logs:
        writer.start()
    assert recording.kinds() == ["start"]
    assert logs[0]["event"] == "ledger.release_failed"
    assert logs[0]["error"] == "OSError: already closed token=***"


@pytest.mark.parametrize("finish", [False, True])
def test_a_process_that_never_finishes_its_run_still_exits(finish: bool) -> None:
    # the heartbeat thread is a daemon: a crash that skips finish() must not hang the exit
    code = (
        "from dlt_ops.ledger.writer import LedgerWriter\n"
        "from dlt_ops.testing.ledger_sinks import make_run\n"
        "class S:\n"
        "    def start(self, r): pass\n"
        "    def heartbeat(self, r): pass\n"
        "    def finish(self, r): pass\n"
        "w = LedgerWriter([('s', S())], make_run(), heartbeat_seconds=30)\n"
        "w.start()\n" + ("w.finish('completed')\n" if finish else "")
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=20)


def test_each_heartbeat_lets_the_connection_go_and_a_failing_one_is_named() -> None:
    released: list[int] = []
    recording = Recording()

    class FailsBeats(Recording):
        def heartbeat(self, run: RunRecord) -> None:
            raise RuntimeError("beat refused")

    writer = LedgerWriter(
        [("rec", recording), ("beats", FailsBeats())], make_run(), heartbeat_seconds=0.05,
        release=lambda: released.append(1),
    )  # fmt: skip
    with capture_logs() as logs:
        writer.start()
        deadline = time.monotonic() + 10
        while recording.kinds().count("heartbeat") < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        writer.finish(RunStatus.completed)
    beats = recording.kinds().count("heartbeat")
    assert beats >= 2 and len(released) == beats + 2  # start, every beat, finish
    assert "Failed to write run-heartbeat row to beats (non-fatal, run continues)" in [
        e["event"] for e in logs
    ]
