"""A clean finish runs beside dlt's end of the extract step, and the step's end waits for it."""

from __future__ import annotations

import threading
from typing import Any

import dlt
import pytest

from dlt_ops.checkpoints import finisher
from dlt_ops.checkpoints.manager import CheckpointManager

GATE_S = 10.0  # a broken hand-off fails the test after this, instead of hanging it


class _Spy:
    """Records where ``complete`` ran and holds it until someone joins the pipeline's finishes:
    a clean finish that nobody waits for stays unfinished until the test looks."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, only: Any = None) -> None:
        """``only``: a pipeline; then only a join of that pipeline's finishes opens the gate."""
        self.threads: list[str] = []
        self.order: list[str] = []  # "<resource> finished", as each finish lands
        self.completed = threading.Event()
        self._gate = threading.Event()
        complete, join = CheckpointManager.complete, finisher.HOOK.join

        def held_complete(manager: CheckpointManager) -> None:
            self.threads.append(threading.current_thread().name)
            if threading.current_thread() is not threading.main_thread():
                self._gate.wait(GATE_S)
            complete(manager)
            self.order.append(f"{manager.resource_name} finished")
            self.completed.set()

        def opening_join(pipeline: Any) -> None:
            # a join before the finish began (the next open's) opens nothing
            if self.threads and (only is None or pipeline is only):
                self._gate.set()
            join(pipeline)

        monkeypatch.setattr(CheckpointManager, "complete", held_complete)
        monkeypatch.setattr(finisher.HOOK, "join", opening_join)


def test_the_finish_runs_off_the_extract_thread_and_extract_returns_after_it(
    ck: Any, duck: Any, make_pipeline: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = _Spy(monkeypatch)
    pipeline = make_pipeline(duck)
    pipeline.extract(ck.resource(ck.FakeApi()))
    assert spy.threads and spy.threads[0] != threading.main_thread().name
    assert spy.completed.is_set()  # extract() returned only after the finish had landed
    statuses = {row[4] for row in ck.rows(duck)}
    assert statuses == {"completed"}


def test_a_run_waits_for_the_finish_before_its_load(
    ck: Any, target: Any, make_pipeline: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = _Spy(monkeypatch)
    info = make_pipeline(target).run(ck.resource(ck.FakeApi()))
    assert not info.has_failed_jobs
    assert spy.completed.is_set()
    assert {row[4] for row in ck.rows(target)} == {"completed"}
    assert target.query("SELECT COUNT(*) FROM ds.events")[0][0] == 20


def test_without_a_runtime_trace_the_finish_runs_in_place(
    ck: Any, duck: Any, make_pipeline: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = _Spy(monkeypatch)
    pipeline = make_pipeline(duck)
    pipeline.config.enable_runtime_trace = False  # no step hooks fire: nothing would wait
    pipeline.extract(ck.resource(ck.FakeApi()))
    assert spy.threads == [threading.main_thread().name]
    assert {row[4] for row in ck.rows(duck)} == {"completed"}


def test_a_replaced_tracking_list_gets_the_hook_back_and_the_finish_runs_in_place(
    ck: Any, duck: Any, make_pipeline: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Something replaced dlt's list of tracking modules after ``@with_checkpoints`` added its
    hook: the step that is already running would never join a hand-off, so the finish runs in
    place, and the hook is back in the list for the next step."""
    from dlt.pipeline import trace

    spy = _Spy(monkeypatch)
    resource = ck.resource(ck.FakeApi())
    monkeypatch.setattr(trace, "TRACKING_MODULES", [])
    make_pipeline(duck).extract(resource)
    assert spy.threads == [threading.main_thread().name]
    assert {row[4] for row in ck.rows(duck)} == {"completed"}
    assert trace.TRACKING_MODULES == [finisher.HOOK]


def test_a_later_failure_in_the_same_step_still_finds_the_rows_completed(
    ck: Any, duck: Any, make_pipeline: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checkpointed resource ends cleanly, then another one fails the extract: the step's
    end (reached through dlt's ``finally``) still waits for the finish."""
    spy = _Spy(monkeypatch)
    monkeypatch.setenv("EXTRACT__NEXT_ITEM_MODE", "fifo")  # resources one after the other

    @dlt.resource(name="after")
    def after() -> Any:
        yield {"n": 1}
        raise RuntimeError("a later resource fails")

    @dlt.source
    def both() -> Any:
        return ck.resource(ck.FakeApi()), after

    with pytest.raises(Exception, match="a later resource fails"):
        make_pipeline(duck).extract(both())
    assert spy.threads and spy.threads[0] != threading.main_thread().name  # handed off
    assert spy.completed.is_set()
    assert {row[4] for row in ck.rows(duck)} == {"completed"}


# -- the hook on its own ---------------------------------------------------------------------------


def test_hook_counts_nested_steps_and_joins_at_each_steps_end() -> None:
    hook, pipeline = finisher._StepHook(), object()
    assert not hook.in_step(pipeline)
    hook.on_start_trace_step(None, "run", pipeline)
    hook.on_start_trace_step(None, "extract", pipeline)
    released, landed = threading.Event(), threading.Event()

    def work() -> None:
        released.wait(GATE_S)
        landed.set()

    hook.hand_off(pipeline, work, "[t]")
    releaser = threading.Thread(target=released.set)
    releaser.start()
    hook.on_end_trace_step(None, "extract", pipeline, None, False)
    assert landed.is_set()  # the end of the inner step waited for the hand-off
    assert hook.in_step(pipeline)  # "run" is still in progress
    hook.on_end_trace_step(None, "run", pipeline, None, False)
    assert not hook.in_step(pipeline)
    releaser.join()


def test_a_failing_finish_is_logged_not_lost(capsys: pytest.CaptureFixture[str]) -> None:
    import structlog
    from structlog.testing import capture_logs

    hook, pipeline = finisher._StepHook(), object()

    def work() -> None:
        raise OSError("disk gone: password=hunter2")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(finisher, "log", structlog.get_logger(finisher.__name__))
        with capture_logs() as captured:
            hook.hand_off(pipeline, work, "[events]")
            hook.join(pipeline)
    errors = [e["event"] for e in captured if e["log_level"] == "error"]
    assert len(errors) == 1 and "[events] Finishing the checkpoints failed" in errors[0]
    assert "hunter2" not in errors[0]


def test_the_next_checkpointed_resource_of_the_step_opens_after_the_last_ones_finish(
    ck: Any, duck: Any, make_pipeline: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two checkpointed resources extracted one after the other in one step: the second's
    ``open`` waits for the first's finish, still running in its thread, to land before it
    reads. The first finish is held until someone joins *this* pipeline's finishes (only a
    join of another pipeline, or none, leaves it held for ``GATE_S``)."""
    pipeline = make_pipeline(duck)
    spy, open_ = _Spy(monkeypatch, only=pipeline), CheckpointManager.open

    def recorded_open(manager: CheckpointManager, **kwargs: Any) -> None:
        open_(manager, **kwargs)
        spy.order.append(f"{manager.resource_name} opened")

    monkeypatch.setattr(CheckpointManager, "open", recorded_open)
    monkeypatch.setenv("EXTRACT__NEXT_ITEM_MODE", "fifo")  # one resource to its end, then the next
    pipeline.extract([ck.resource(ck.FakeApi(), name=name) for name in ("first", "second")])
    assert spy.order.index("first finished") < spy.order.index("second opened"), spy.order


def test_a_handed_off_finish_that_fails_names_its_resource(
    ck: Any, duck: Any, make_pipeline: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The extract succeeded and its finish, in its thread, failed: the error names the
    resource whose checkpoints stay active."""
    import structlog
    from structlog.testing import capture_logs

    def broken_complete(manager: CheckpointManager) -> None:
        raise OSError("checkpoint table gone")

    monkeypatch.setattr(CheckpointManager, "complete", broken_complete)
    monkeypatch.setattr(finisher, "log", structlog.get_logger(finisher.__name__))
    with capture_logs() as captured:
        make_pipeline(duck).extract(ck.resource(ck.FakeApi(), name="orders"))
    errors = [e["event"] for e in captured if e["log_level"] == "error"]
    assert errors == ["[orders] Finishing the checkpoints failed: checkpoint table gone"], errors
