"""The ledger outbox: a finish a sink refused is kept locally, shown by readers, and written to
the row by the next flush; a sink that still refuses keeps it."""

from __future__ import annotations

from pathlib import Path

from dlt_ops.ledger import outbox
from dlt_ops.ledger.model import RunRecord, RunStatus
from dlt_ops.ledger.writer import LedgerWriter
from dlt_ops.testing.ledger_sinks import make_run


class Recording:
    """A sink that keeps the finishes it was given."""

    target = "recording"

    def __init__(self) -> None:
        self.finished: list[RunRecord] = []

    def start(self, run: RunRecord) -> None:
        pass

    def heartbeat(self, run: RunRecord) -> None:
        pass

    def finish(self, run: RunRecord) -> None:
        self.finished.append(run)


class Gone(Recording):
    """A sink whose destination went away: every write fails."""

    def start(self, run: RunRecord) -> None:
        raise ConnectionError("server closed the connection unexpectedly")

    finish = start


def _failed_run(root: Path) -> RunRecord:
    writer = LedgerWriter(
        [("destination", Gone())], make_run("events", run_id="r1"), heartbeat_seconds=0,
        refused=lambda sink, record: outbox.keep(root, sink, record),
    )  # fmt: skip
    writer.start()
    return writer.finish(RunStatus.failed, error_summary="OperationalError: connection refused")


def test_a_refused_finish_is_kept_then_written_once(tmp_path: Path) -> None:
    ended = _failed_run(tmp_path)
    (kept,) = outbox.pending(tmp_path, "events")
    assert (kept.sink, kept.record) == ("destination", ended)
    back = Recording()
    assert outbox.flush(tmp_path, [("destination", back)], "events") == [ended]
    assert back.finished == [ended]
    assert outbox.pending(tmp_path, "events") == []
    assert outbox.flush(tmp_path, [("destination", back)], "events") == []


def test_a_sink_that_still_refuses_keeps_the_finish(tmp_path: Path) -> None:
    _failed_run(tmp_path)
    assert outbox.flush(tmp_path, [("destination", Gone())], "events") == []
    assert outbox.flush(tmp_path, [("jsonl", Recording())], "events") == []  # not its finish
    assert len(outbox.pending(tmp_path, "events")) == 1
    assert outbox.pending(tmp_path, "other") == []
    assert outbox.pending(tmp_path, "events", dataset="elsewhere") == []


def test_readers_show_the_kept_finish_of_a_running_row_only(tmp_path: Path) -> None:
    ended = _failed_run(tmp_path)
    running = ended.replace(status=str(RunStatus.running), completed_at=None, error_summary=None)
    other = make_run("events", run_id="r2", status="completed")
    shown = outbox.overlay(tmp_path, [running, other], "events", dataset=ended.dataset)
    assert shown == [ended, other]
    closed = running.replace(status=str(RunStatus.completed))  # closed by someone meanwhile
    assert outbox.overlay(tmp_path, [closed], "events", dataset=ended.dataset) == [closed]
