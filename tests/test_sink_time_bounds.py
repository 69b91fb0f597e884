"""Every sink call on a run's path is time-bounded (``call_timeout_s``): a ledger or alert sink
that never returns costs the run its bound, is logged as timed out, and the run ends with its
outcome and its other sinks' rows intact.

The hanging sinks block on an Event nobody sets until the test is over. Each run goes in a
thread joined with a generous guard, so a regression fails the test instead of hanging it.
"""

from __future__ import annotations

import threading
import types
from collections.abc import Callable, Iterator
from typing import Any

import duckdb
import pytest
from structlog.testing import capture_logs

from dlt_ops import hookimpl
from dlt_ops.config import load_project_config
from dlt_ops.errors import ConfigError, PluginTimeoutError
from dlt_ops.plugins import PluginRegistry
from dlt_ops.plugins.bound import Bound
from dlt_ops.runner.run import RunRequest, execute_run

CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"
{top}

[sources.events_src.dlt_ops]
schedule = "@daily"
"""
GUARD_S = 120  # a regression hangs for ever; this only turns it into a failure


@pytest.fixture
def never() -> Iterator[threading.Event]:
    """The Event the hanging sinks wait on; set at teardown so their threads end."""
    event = threading.Event()
    yield event
    event.set()


def _hanging_ledger_sink(never: threading.Event, calls: list[str]) -> types.ModuleType:
    class Hanging:
        target = "nowhere"

        def __init__(self, context: Any) -> None:
            pass

        def _hang(self, call: str) -> None:
            calls.append(call)
            never.wait()

        def start(self, run: Any) -> None:
            self._hang("start")

        def heartbeat(self, run: Any) -> None:
            self._hang("heartbeat")

        def finish(self, run: Any) -> None:
            self._hang("finish")

    module = types.ModuleType("hanging_ledger_sink")

    @hookimpl
    def dlt_ops_register_ledger_sinks(register: Any) -> None:
        register(Hanging, name="hang")

    module.dlt_ops_register_ledger_sinks = dlt_ops_register_ledger_sinks  # type: ignore[attr-defined]
    return module


def _in_thread(work: Callable[[], Any]) -> Any:
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # handed back to the test
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(GUARD_S)
    assert not thread.is_alive(), "the run did not end: a sink call is not bounded"
    if "error" in box:
        raise box["error"]
    return box["value"]


def test_a_ledger_sink_that_never_returns_does_not_stall_the_run(project, templates, never) -> None:  # noqa: ANN001
    top = 'ledger_sinks = ["destination", "hang"]\n[dlt_ops.ledger_sink.hang]\ncall_timeout_s = 0.2'
    root = project(CONFIG.format(top=top), {"events_src": templates["events"]})
    calls: list[str] = []
    registry = PluginRegistry()
    registry.add_plugin(_hanging_ledger_sink(never, calls), name="hang", kind="ledger_sink")
    config = load_project_config(root)
    with capture_logs() as logs:
        outcome = _in_thread(lambda: execute_run(registry, config, RunRequest("events_src")))
    assert outcome.ok and outcome.record.status == "completed"
    assert outcome.record.records_loaded == 6
    # the start call timed out and still hangs: later writes queued behind it, not waited for
    timed_out = [e for e in logs if e["event"] == "plugin.timed_out"]
    assert [(e["plugin"], e["call"], e["timeout_s"]) for e in timed_out] == [
        ("ledger_sink 'hang'", "start", 0.2)
    ]
    assert ("finish", True) in [(e["call"], e["queued"]) for e in logs
                                if e["event"] == "plugin.behind"]  # fmt: skip
    assert calls == ["start"]  # in order: the finish waits behind the hung start
    # the other sink wrote the run whole
    with duckdb.connect(str(root / "events_src_pipeline.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT status, records_loaded FROM ds._dlt_ops_runs").fetchall()
    assert rows == [("completed", 6)]


def test_an_alert_sink_that_never_returns_does_not_stall_the_run(project, templates, never) -> None:  # noqa: ANN001
    failing = templates["events"].replace("    return events", "    raise ValueError('boom')")
    top = 'alert_sinks = ["hang"]\n[dlt_ops.alert_sink.hang]\ncall_timeout_s = 0.2'
    root = project(CONFIG.format(top=top), {"events_src": failing})

    class Hanging:
        target = "nowhere"

        def __init__(self, context: Any) -> None:
            pass

        def send(self, alert: Any) -> None:
            never.wait()

    module = types.ModuleType("hanging_alert_sink")

    @hookimpl
    def dlt_ops_register_alert_sinks(register: Any) -> None:
        register(Hanging, name="hang")

    module.dlt_ops_register_alert_sinks = dlt_ops_register_alert_sinks  # type: ignore[attr-defined]
    registry = PluginRegistry()
    registry.add_plugin(module, name="hang", kind="alert_sink")
    config = load_project_config(root)
    with capture_logs() as logs:
        outcome = _in_thread(lambda: execute_run(registry, config, RunRequest("events_src")))
    assert outcome.record.status == "failed" and "boom" in outcome.record.error_summary
    assert [(e["plugin"], e["call"]) for e in logs if e["event"] == "plugin.timed_out"] == [
        ("alert_sink 'hang'", "send")
    ]


@pytest.mark.parametrize("value", ['"soon"', "0", "601", "true"])
def test_a_bad_call_timeout_refuses_the_run(project, templates, value: str) -> None:  # noqa: ANN001
    top = f"[dlt_ops.ledger_sink.destination]\ncall_timeout_s = {value}"
    root = project(CONFIG.format(top=top), {"events_src": templates["events"]})
    with pytest.raises(ConfigError, match=r"\[dlt_ops.ledger_sink.destination\] call_timeout_s"):
        execute_run(PluginRegistry(), load_project_config(root), RunRequest("events_src"))
    assert not (root / "events_src_pipeline.duckdb").exists()  # nothing written


def test_calls_keep_their_order_and_a_sink_that_catches_up_is_waited_for_again() -> None:
    release, done = threading.Event(), []
    bound = Bound("ledger_sink 'slow'", 0.05)

    def slow(what: str) -> None:
        release.wait()
        done.append(what)

    with pytest.raises(PluginTimeoutError, match="start timed out after 0.05s"):
        bound.write("start", slow, "start")
    with pytest.raises(PluginTimeoutError, match="not waited for") as behind:
        bound.write("finish", done.append, "finish")  # queued behind the slow start
    assert behind.value.behind
    with pytest.raises(PluginTimeoutError, match="not waited for"):
        bound.read("read_runs", lambda: ["never called"])  # a read is refused at once
    release.set()
    assert bound.wait_idle(GUARD_S)
    assert bound.read("read_runs", lambda: list(done)) == ["start", "finish"]  # caught up
    assert bound.read("read_run", lambda: 42) == 42


def test_a_call_that_raises_raises_in_the_caller() -> None:
    bound = Bound("alert_sink 'broken'", 5)
    with pytest.raises(ValueError, match="nope"):
        bound.write("send", lambda: (_ for _ in ()).throw(ValueError("nope")))
    assert bound.read("send", lambda: "ok") == "ok"  # not behind: a raise is no timeout


def test_a_lifecycle_observer_that_never_returns_does_not_stall_the_run(
    project, templates, never
) -> None:  # noqa: ANN001
    top = "[dlt_ops.lifecycle]\ncall_timeout_s = 0.2"  # the default is 30 s
    root = project(CONFIG.format(top=top), {"events_src": templates["events"]})
    module = types.ModuleType("hanging_observer")

    @hookimpl
    def dlt_ops_run_started(run: Any) -> None:
        never.wait()

    @hookimpl
    def dlt_ops_run_finished(run: Any) -> None:
        never.wait()

    module.dlt_ops_run_started = dlt_ops_run_started  # type: ignore[attr-defined]
    module.dlt_ops_run_finished = dlt_ops_run_finished  # type: ignore[attr-defined]
    registry = PluginRegistry()
    registry.add_plugin(module, name="hanging", kind="lifecycle")
    config = load_project_config(root)
    with capture_logs() as logs:
        outcome = _in_thread(lambda: execute_run(registry, config, RunRequest("events_src")))
    assert outcome.ok and outcome.record.records_loaded == 6
    timed_out = [(e["call"], e["timeout_s"]) for e in logs if e["event"] == "plugin.timed_out"]
    assert timed_out == [("dlt_ops_run_started", 0.2), ("dlt_ops_run_finished", 0.2)]
    assert outcome.reports  # the built-in receipts observer still ran after the hung one


def test_an_idle_worker_ends_and_the_next_call_starts_another(monkeypatch) -> None:  # noqa: ANN001
    from dlt_ops.plugins import bound as bound_module

    monkeypatch.setattr(bound_module, "IDLE_EXIT_S", 0.05)  # 2 s: a backfill's many chunks
    bound = Bound("ledger_sink 'jsonl'", 5)
    assert bound.read("read_runs", lambda: 1) == 1
    worker = bound._worker
    assert worker is not None
    worker.join(GUARD_S)
    assert not worker.is_alive()  # no idle thread left per sink and chunk
    assert bound.read("read_runs", lambda: 2) == 2
