"""The plugin calls a run makes besides its sinks are time-bounded too: a secret backend's
``prepare`` / ``prepare_destination`` (``[dlt_ops.secret_backend.<name>] call_timeout_s``) and a
lifecycle plugin's ``dlt_ops_prepare_run`` and observers (``[dlt_ops.lifecycle]
call_timeout_s``).

A secret backend that never answers fails the run with a clear error (its secrets are not
there, so nothing may run without them); a prepare check that never answers refuses the run
(it may be the guard that would have refused it); a hung observer is logged and the run goes
on. The hanging plugins block on an Event nobody sets until the test is over; each run goes in
a thread joined with a guard (``_in_thread``), so a regression fails instead of hanging.
"""

from __future__ import annotations

import threading
import types
from collections.abc import Iterator
from typing import Any

import pytest
from structlog.testing import capture_logs

from dlt_ops import hookimpl
from dlt_ops.config import load_project_config
from dlt_ops.errors import ConfigError, DltOpsError, SecretBackendError
from dlt_ops.plugins import PluginRegistry
from dlt_ops.runner.run import RunRequest, execute_run
from tests.test_sink_time_bounds import CONFIG, _in_thread


@pytest.fixture
def never() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


def _backend(never: threading.Event, hang: str, calls: list[str]) -> types.ModuleType:
    class Hanging:
        name = "vault"

        def claims(self, source: Any) -> bool:
            return True

        def check(self, config: Any, source: str) -> list[str]:
            return []

        def prepare(self, config: Any, source: str) -> None:
            calls.append("prepare")
            if hang == "prepare":
                never.wait()

        def prepare_destination(self, config: Any, source: str) -> None:
            calls.append("prepare_destination")
            if hang == "prepare_destination":
                never.wait()

    module = types.ModuleType(f"hanging_backend_{hang}")

    @hookimpl
    def dlt_ops_register_secret_backends(register: Any) -> None:
        register(Hanging(), name="vault")

    module.dlt_ops_register_secret_backends = dlt_ops_register_secret_backends  # type: ignore[attr-defined]
    return module


@pytest.mark.parametrize("hang", ["prepare_destination", "prepare"])
def test_a_secret_backend_that_never_answers_fails_the_run_within_its_bound(
    project, templates, never, hang: str
) -> None:  # noqa: ANN001
    top = "[dlt_ops.secret_backend.vault]\ncall_timeout_s = 0.2"
    root = project(CONFIG.format(top=top), {"events_src": templates["events"]})
    calls: list[str] = []
    registry = PluginRegistry()
    registry.add_plugin(_backend(never, hang, calls), name="vault", kind="secret_backend")
    config = load_project_config(root)

    def run() -> Any:
        try:
            return execute_run(registry, config, RunRequest("events_src"))
        except DltOpsError as exc:  # before the start row the run is refused with the error
            return exc

    with capture_logs() as logs:
        result = _in_thread(run)
    timed_out = [(e["plugin"], e["call"], e["timeout_s"]) for e in logs
                 if e["event"] == "plugin.timed_out"]  # fmt: skip
    assert timed_out == [("secret_backend 'vault'", hang, 0.2)]
    message = str(result) if isinstance(result, DltOpsError) else result.record.error_summary
    assert f"secret backend 'vault' did not answer {hang}" in message
    assert "within 0.2s" in message
    if hang == "prepare_destination":  # before anything is written: a refusal
        assert isinstance(result, SecretBackendError) and result.exit_code == 2
        assert not (root / "events_src_pipeline.duckdb").exists()
    else:  # after the start row: the run fails, nothing is extracted or loaded
        assert result.record.status == "failed" and not result.record.records_loaded
    assert calls[-1] == hang


def test_a_bad_secret_backend_bound_refuses_the_run(project, templates, never) -> None:  # noqa: ANN001
    top = '[dlt_ops.secret_backend.vault]\ncall_timeout_s = "soon"'
    root = project(CONFIG.format(top=top), {"events_src": templates["events"]})
    registry = PluginRegistry()
    registry.add_plugin(_backend(never, "", []), name="vault", kind="secret_backend")
    with pytest.raises(ConfigError, match=r"\[dlt_ops.secret_backend.vault\] call_timeout_s"):
        execute_run(registry, load_project_config(root), RunRequest("events_src"))


def test_a_prepare_check_that_never_answers_refuses_the_run(project, templates, never) -> None:  # noqa: ANN001
    top = "[dlt_ops.lifecycle]\ncall_timeout_s = 0.2"
    root = project(CONFIG.format(top=top), {"events_src": templates["events"]})
    module = types.ModuleType("hanging_guard")

    @hookimpl
    def dlt_ops_prepare_run(prepared: Any) -> None:
        never.wait()

    module.dlt_ops_prepare_run = dlt_ops_prepare_run  # type: ignore[attr-defined]
    registry = PluginRegistry()
    registry.add_plugin(module, name="guard", kind="lifecycle")
    config = load_project_config(root)

    def run() -> Any:
        try:
            return execute_run(registry, config, RunRequest("events_src"))
        except DltOpsError as exc:
            return exc

    with capture_logs() as logs:
        result = _in_thread(run)
    assert isinstance(result, DltOpsError) and result.exit_code == 2
    assert "dlt_ops_prepare_run timed out after 0.2s" in str(result)
    assert [e["call"] for e in logs if e["event"] == "plugin.timed_out"] == ["dlt_ops_prepare_run"]
    assert not (root / "events_src_pipeline.duckdb").exists()  # refused: nothing ran
