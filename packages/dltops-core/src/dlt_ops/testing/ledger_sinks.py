"""The ledger-sink conformance kit.

Subclass :class:`LedgerSinkSuite` in your plugin's tests::

    class TestMySink(LedgerSinkSuite):
        __test__ = True

        @pytest.fixture
        def sink_factory(self):
            return MySink  # what your plugin registers

``sink_context`` is the :class:`~dlt_ops.ledger.LedgerSinkContext` the factory is called with:
by default a core-tier context rooted in ``tmp_path`` whose ``open_session`` raises. Override it
for a sink that needs the destination (full tier, a live session) or options.

The write side (:class:`~dlt_ops.ledger.LedgerSink`) is checked for every sink, and what it
wrote is read back: through the sink's own ``RunReader`` when it has one, else through the
``stored`` fixture, which a write-only sink's tests override to list what reached the far side
(every attempt in its latest state, as ``RunRecord`` objects)::

        @pytest.fixture
        def stored(self, far_side):
            return lambda: [decode(doc) for doc in far_side.documents]

A write-only sink without ``stored`` is only checked to accept the calls, and
``test_what_was_written_can_be_read_back`` skips saying so. The read side is optional: the
``RunReader`` tests skip when the sink has no ``read_runs``/``read_run``, the ``LedgerPruner``
tests when it has no ``prune``; a sink with half a reader fails.
"""

from __future__ import annotations

import abc
import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from dlt_ops.ledger import LedgerQuery, LedgerSink, LedgerSinkContext, RunRecord
from dlt_ops.ledger.sinks import LedgerPruner, LedgerSinkFactory, RunReader

T0 = datetime(2026, 1, 5, 8, 30, 0, 123000, tzinfo=UTC)
#: Lists what reached a write-only sink's far side: every attempt, in its latest state.
Stored = Callable[[], list[RunRecord]]


def _no_session() -> Any:
    raise RuntimeError("this kit context has no destination session (core tier)")


def make_run(
    source: str = "kit_source",
    *,
    run_id: str | None = None,
    started_at: datetime = T0,
    resource: str | None = None,
    status: str = "running",
    **fields: Any,
) -> RunRecord:
    """A ``running`` ledger record with plausible values (override any field)."""
    values: dict[str, Any] = dict(
        pipeline_name=f"{source}_pipeline",
        source_section=source,
        resource_name=resource,
        destination="kitdb",
        dataset="kit_dataset",
        run_id=run_id or uuid.uuid4().hex,
        dlt_run_id=None,
        backfill_id=None,
        trigger_source="cli",
        started_at=started_at,
        completed_at=None,
        status=status,
        records_extracted=None,
        records_loaded=None,
        error_summary=None,
        host="kit-host",
        pid=4242,
        heartbeat_at=started_at,
    )
    values.update(fields)
    return RunRecord(**values)


def finished(run: RunRecord, status: str = "completed", **fields: Any) -> RunRecord:
    """``run`` in a terminal state, a minute later."""
    done = run.started_at + timedelta(minutes=1)
    defaults: dict[str, Any] = dict(
        completed_at=done, heartbeat_at=done, records_extracted=10, records_loaded=10
    )
    defaults.update(fields)
    return run.replace(status=status, **defaults)


class LedgerSinkSuite(abc.ABC):
    """The ledger-sink contract as tests. Subclass, set ``__test__ = True``, give the factory."""

    __test__ = False

    @abc.abstractmethod
    @pytest.fixture
    def sink_factory(self) -> LedgerSinkFactory:
        """What the plugin registers: called with ``sink_context``, returns the sink."""

    @pytest.fixture
    def sink_context(self, tmp_path: Any) -> LedgerSinkContext:
        """A core-tier context rooted in ``tmp_path`` (override for options or a session)."""
        return LedgerSinkContext(
            name="kit",
            project_root=tmp_path,
            engine="kitdb",
            dataset="kit_dataset",
            full_tier=False,
            open_session=_no_session,
            options={},
        )

    @pytest.fixture
    def sink(self, sink_factory: LedgerSinkFactory, sink_context: LedgerSinkContext) -> LedgerSink:
        """A fresh sink built the way the core builds one."""
        return sink_factory(sink_context)

    @pytest.fixture
    def reader(self, sink: LedgerSink) -> RunReader:
        """The sink as a ``RunReader`` (skips when it has no read side)."""
        has = [callable(getattr(sink, m, None)) for m in ("read_runs", "read_run")]
        if not any(has):
            pytest.skip("the sink has no read side (RunReader)")
        assert all(has), "a RunReader implements both read_runs and read_run"
        assert isinstance(sink, RunReader)
        return sink

    @pytest.fixture
    def stored(self) -> Stored | None:
        """What a write-only sink kept (override; ``None``: the kit cannot look)."""
        return None

    @pytest.fixture
    def read_back(self, sink: LedgerSink, stored: Stored | None) -> Stored | None:
        """Every ``kit_source`` attempt the sink kept, through its reader or ``stored``."""
        if callable(getattr(sink, "read_runs", None)):
            reader: Any = sink
            return lambda: list(reader.read_runs(LedgerQuery("kit_source", limit=100)) or [])
        if stored is None:
            return None
        return lambda: [r for r in stored() if r.source_section == "kit_source"]

    @pytest.fixture
    def pruner(self, reader: RunReader) -> LedgerPruner:
        """The sink as a ``LedgerPruner`` (skips when it cannot prune)."""
        if not callable(getattr(reader, "prune", None)):
            pytest.skip("the sink cannot prune (LedgerPruner)")
        assert isinstance(reader, LedgerPruner)
        return reader

    # -- write side ---------------------------------------------------------------------------

    def test_satisfies_the_write_protocol(self, sink: LedgerSink) -> None:
        assert isinstance(sink, LedgerSink)
        assert isinstance(sink.target, str) and sink.target

    def test_start_heartbeat_finish_accept_a_run(
        self, sink: LedgerSink, read_back: Stored | None
    ) -> None:
        run = make_run()
        sink.start(run)
        if read_back is not None:  # the start row exists before the run does anything
            assert [(r.run_id, r.status) for r in read_back()] == [(run.run_id, "running")]
        beat = run.replace(heartbeat_at=T0 + timedelta(seconds=30))
        sink.heartbeat(beat)
        if read_back is not None:
            (got,) = read_back()
            assert (got.status, got.heartbeat_at) == ("running", beat.heartbeat_at)
        done = finished(run)
        sink.finish(done)
        if read_back is not None:
            assert read_back() == [done], "the finished run was not kept as it was written"

    def test_a_failed_run_is_recorded(self, sink: LedgerSink, read_back: Stored | None) -> None:
        run = make_run()
        sink.start(run)
        failed = finished(run, "failed", error_summary="ValueError: boom", records_loaded=0)
        sink.finish(failed)
        if read_back is not None:
            (got,) = read_back()
            assert (got.run_id, got.status, got.error_summary) == (
                run.run_id,
                "failed",
                "ValueError: boom",
            )
            assert (got.records_loaded, got.completed_at) == (0, failed.completed_at)

    def test_what_was_written_can_be_read_back(self, read_back: Stored | None) -> None:
        # the two tests above check what was kept only when the kit can look at it
        if read_back is None:
            pytest.skip(
                "write-only sink without a `stored` fixture: the kit checked that it accepts "
                "runs, not that it keeps them; override `stored` to list what it kept"
            )
        assert read_back() == []  # and a fresh sink starts empty

    # -- read side ----------------------------------------------------------------------------

    def test_reading_an_empty_ledger_finds_nothing(self, reader: RunReader) -> None:
        assert reader.read_runs(LedgerQuery("kit_source")) in (None, [])
        assert reader.read_run("0123456789abcdef") == []

    def test_a_started_run_reads_back_as_running(self, sink: LedgerSink, reader: RunReader) -> None:
        run = make_run()
        sink.start(run)
        (got,) = reader.read_runs(LedgerQuery("kit_source")) or []
        assert (got.run_id, got.status, got.started_at) == (run.run_id, "running", T0)
        assert got.completed_at is None

    def test_a_finished_run_reads_back_once_with_its_terminal_fields(
        self, sink: LedgerSink, reader: RunReader
    ) -> None:
        run = make_run(dlt_run_id=None)
        sink.start(run)
        done = finished(run, dlt_run_id="1700000000.1", records_extracted=7, records_loaded=5)
        sink.finish(done)
        (got,) = reader.read_runs(LedgerQuery("kit_source")) or []
        assert got.status == "completed"
        assert got.completed_at == done.completed_at
        assert (got.records_extracted, got.records_loaded) == (7, 5)
        assert got.dlt_run_id == "1700000000.1"
        assert got.started_at.tzinfo is not None and got.started_at == T0

    def test_a_heartbeat_from_another_thread_is_read_back(
        self, sink: LedgerSink, reader: RunReader
    ) -> None:
        # LedgerWriter renews heartbeat_at from a daemon thread, not the thread that started
        run = make_run()
        sink.start(run)
        beat = run.replace(heartbeat_at=T0 + timedelta(seconds=30))
        errors: list[BaseException] = []

        def renew() -> None:
            try:
                sink.heartbeat(beat)
            except BaseException as exc:  # re-raised in the test thread
                errors.append(exc)

        thread = threading.Thread(target=renew)
        thread.start()
        thread.join()
        assert errors == []
        (got,) = reader.read_runs(LedgerQuery("kit_source")) or []
        assert got.heartbeat_at == beat.heartbeat_at and got.status == "running"

    def test_read_runs_is_newest_first_limited_and_filtered(
        self, sink: LedgerSink, reader: RunReader
    ) -> None:
        runs = [
            make_run(started_at=T0 + timedelta(hours=i), resource="a" if i % 2 else "b")
            for i in range(4)
        ]
        for run in runs:
            sink.start(run)
        sink.finish(finished(runs[3], "failed", error_summary="x"))
        sink.start(make_run("other_source", started_at=T0 + timedelta(hours=9)))

        def ids(**query: Any) -> list[str]:
            return [r.run_id for r in reader.read_runs(LedgerQuery("kit_source", **query)) or []]

        newest_first = [r.run_id for r in reversed(runs)]
        assert ids() == newest_first
        assert ids(limit=2) == newest_first[:2]
        assert ids(resource="a") == [runs[3].run_id, runs[1].run_id]
        assert ids(status="failed") == [runs[3].run_id]
        assert ids(since=T0 + timedelta(hours=2)) == newest_first[:2]

    def test_read_run_finds_every_attempt_by_id_or_prefix(
        self, sink: LedgerSink, reader: RunReader
    ) -> None:
        # a retried backfill chunk keeps its run id: one record per attempt (started_at)
        first = make_run(run_id="c0ffee00" + "1" * 24)
        retry = first.replace(started_at=T0 + timedelta(hours=1), heartbeat_at=None)
        sink.start(first)
        sink.finish(finished(first, "failed", error_summary="timeout"))
        sink.start(retry)
        sink.finish(finished(retry))
        sink.start(make_run(run_id="deadbeef" + "2" * 24))
        attempts = reader.read_run("c0ffee00")
        assert [(r.run_id, r.status) for r in attempts] == [
            (first.run_id, "completed"),
            (first.run_id, "failed"),
        ]
        assert reader.read_run(first.run_id) == attempts
        assert reader.read_run("feedface") == []

    def test_a_second_sink_reads_what_the_first_wrote(
        self,
        sink: LedgerSink,
        sink_factory: LedgerSinkFactory,
        sink_context: LedgerSinkContext,
        reader: RunReader,
    ) -> None:
        # the core builds a new sink per run and per read: the ledger outlives the object
        run = make_run()
        sink.start(run)
        sink.finish(finished(run))
        again = sink_factory(sink_context)
        assert isinstance(again, RunReader)
        assert [r.run_id for r in again.read_runs(LedgerQuery("kit_source")) or []] == [run.run_id]

    # -- prune --------------------------------------------------------------------------------

    def test_prune_of_an_empty_ledger_is_zero(self, pruner: LedgerPruner) -> None:
        assert pruner.prune(T0 + timedelta(days=1), dry_run=True) == 0
        assert pruner.prune(T0 + timedelta(days=1), dry_run=False) == 0

    def test_prune_counts_on_dry_run_and_removes_only_older_runs(
        self, sink: LedgerSink, pruner: LedgerPruner, reader: RunReader
    ) -> None:
        old = [make_run(started_at=T0 - timedelta(days=40 + i)) for i in range(3)]
        new = make_run(started_at=T0)
        for run in (*old, new):
            sink.start(run)
            sink.finish(finished(run))
        cutoff = T0 - timedelta(days=30)
        assert pruner.prune(cutoff, dry_run=True) == 3
        assert len(reader.read_runs(LedgerQuery("kit_source")) or []) == 4
        assert pruner.prune(cutoff, dry_run=False) == 3
        assert [r.run_id for r in reader.read_runs(LedgerQuery("kit_source")) or []] == [new.run_id]
        assert pruner.prune(cutoff, dry_run=False) == 0
