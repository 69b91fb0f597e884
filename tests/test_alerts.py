"""Alert sinks: a failed run reaches every configured sink; a misspelled sink is refused.

The webhook is tested against a real HTTP server on localhost (``http.server`` in a thread).
"""

from __future__ import annotations

import json
import threading
import types
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer

import duckdb
import pytest
from structlog.testing import capture_logs

from dlt_ops import hookimpl
from dlt_ops.config import load_project_config
from dlt_ops.plugins import PluginRegistry
from dlt_ops.runner.run import RunRequest, execute_run

CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"
{top}

[sources.events_src.dlt_ops]
schedule = "@daily"
{source_extra}
"""
SECRET = "hunter2-very-secret"
FAILING = """
import dlt


@dlt.resource(name="rows")
def rows():
    yield [{{"a": 1}}]


@dlt.source(name="{name}")
def {name}_source():
    raise ValueError("cannot reach https://bob:hunter2-very-secret@api.example.com/v1")
"""


class _Receiver:
    """A real HTTP server that records POSTed JSON bodies; answers ``codes`` in turn, then 200."""

    def __init__(self, codes: list[int]) -> None:
        self.bodies: list[dict] = []
        self.codes = list(codes)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers["Content-Length"])
                receiver.bodies.append(json.loads(self.rfile.read(length)))
                code = receiver.codes.pop(0) if receiver.codes else 200
                self.send_response(code)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> _Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def receiver() -> Iterator[_Receiver]:
    with _Receiver([]) as server:
        yield server


def _webhook(url: str, extra: str = "") -> str:
    return f'alert_sinks = ["webhook"]\n\n[dlt_ops.alert_sink.webhook]\nurl = "{url}"\n{extra}'


def test_a_failed_run_posts_one_json_document(project, cli, receiver) -> None:  # noqa: ANN001
    root = project(
        CONFIG.format(top=_webhook(receiver.url), source_extra=""),
        {"events_src": FAILING},
    )
    run = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    assert run.returncode == 1, run.stderr
    (alert,) = receiver.bodies
    assert alert["kind"] == "run_failed" and alert["source"] == "events_src"
    assert alert["destination"] == "duckdb" and alert["dataset"] == "ds"
    assert "ValueError: cannot reach" in alert["message"]
    assert SECRET not in json.dumps(alert) and SECRET not in run.stderr  # redacted
    with duckdb.connect(str(root / "events_src_pipeline.duckdb"), read_only=True) as con:
        (run_id,) = con.execute("SELECT run_id FROM ds._dlt_ops_runs").fetchone()
    assert alert["run_id"] == run_id


def test_a_completed_run_alerts_nobody(project, templates, cli, receiver) -> None:  # noqa: ANN001
    root = project(
        CONFIG.format(top=_webhook(receiver.url), source_extra=""),
        {"events_src": templates["events"]},
    )
    assert cli("pipeline", "run", "-s", "events_src", "-y", cwd=root).returncode == 0
    assert receiver.bodies == []


def test_a_failed_assertion_is_its_own_alert(project, templates, receiver) -> None:  # noqa: ANN001
    assertion = "[sources.events_src.dlt_ops.assertions.events]\nmin_rows_per_load = 100\n"
    root = project(
        CONFIG.format(top=_webhook(receiver.url), source_extra=assertion),
        {"events_src": templates["events"]},
    )
    outcome = execute_run(PluginRegistry(), load_project_config(root), RunRequest("events_src"))
    assert not outcome.ok
    (alert,) = receiver.bodies
    assert alert["kind"] == "assertion_failed"
    assert alert["failed_checks"] == ["min_rows_per_load on events"]


def test_webhook_retries_a_5xx_then_delivers(project, templates) -> None:  # noqa: ANN001
    with _Receiver([503]) as flaky:
        root = project(
            CONFIG.format(top=_webhook(flaky.url, "backoff_s = 0\n"), source_extra=""),
            {"events_src": FAILING},
        )
        outcome = execute_run(PluginRegistry(), load_project_config(root), RunRequest("events_src"))
    assert not outcome.ok
    assert len(flaky.bodies) == 2 and flaky.bodies[0] == flaky.bodies[1]


def test_an_unreachable_webhook_is_logged_never_fatal(project, templates, tmp_path) -> None:  # noqa: ANN001
    with _Receiver([]) as gone:
        url = gone.url  # the port is free again once the server is closed
    root = project(
        CONFIG.format(top=_webhook(url, "retries = 1\nbackoff_s = 0\ntimeout_s = 2\n"),
                      source_extra=""),
        {"events_src": FAILING},
    )  # fmt: skip
    with capture_logs() as logs:
        outcome = execute_run(PluginRegistry(), load_project_config(root), RunRequest("events_src"))
    assert outcome.record.status == "failed"  # the run's own outcome, untouched
    errors = [e["event"] for e in logs if e["log_level"] == "error"]
    assert "Failed to send alert to webhook 127.0.0.1 (non-fatal)" in errors


def test_the_log_sink_is_the_default(project) -> None:  # noqa: ANN001
    root = project(CONFIG.format(top="", source_extra=""), {"events_src": FAILING})
    with capture_logs() as logs:
        execute_run(PluginRegistry(), load_project_config(root), RunRequest("events_src"))
    (alert,) = [e for e in logs if e["event"] == "alert"]
    assert alert["kind"] == "run_failed" and alert["source"] == "events_src"


@pytest.mark.parametrize(
    ("top", "rule", "needle"),
    [
        ('alert_sinks = ["webhok"]', "alert_sink_registered",
         "no alert_sink plugin named 'webhok'"),
        ('ledger_sinks = ["destinaton"]', "ledger_sink_registered",
         "no ledger_sink plugin named 'destinaton'"),
    ],
)  # fmt: skip
def test_a_misspelled_sink_is_a_finding_and_a_refusal(project, templates, cli, top, rule, needle):  # noqa: ANN001, ANN201, E501
    root = project(CONFIG.format(top=top, source_extra=""), {"events_src": templates["events"]})
    found = cli("pipeline", "validate", "--json", cwd=root)
    assert found.returncode == 1
    (finding,) = [f for f in json.loads(found.stdout) if f["rule"] == rule]
    assert needle in finding["message"] and finding["source"] == "dlt_ops"
    run = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    assert run.returncode == 2 and needle in run.stderr
    assert not (root / "events_src_pipeline.duckdb").exists()  # nothing was written
    assert not (root / ".dlt-ops" / "pipelines").exists()


def _raising_observer() -> types.ModuleType:
    mod = types.ModuleType("raising_observer_plugin")

    @hookimpl
    def dlt_ops_run_started(run):  # noqa: ANN001, ANN202
        raise RuntimeError("observer broke at start")

    @hookimpl
    def dlt_ops_run_finished(run, outcome):  # noqa: ANN001, ANN202
        outcome.record = None  # an observer cannot take the outcome away from the caller
        raise RuntimeError("observer broke at finish")

    mod.dlt_ops_run_started = dlt_ops_run_started
    mod.dlt_ops_run_finished = dlt_ops_run_finished
    return mod


def test_a_raising_observer_is_logged_and_isolated(project, templates) -> None:  # noqa: ANN001
    root = project(CONFIG.format(top="", source_extra=""), {"events_src": templates["events"]})
    registry = PluginRegistry()
    registry.add_plugin(_raising_observer(), name="raising", kind="lifecycle")
    with capture_logs() as logs:
        outcome = execute_run(registry, load_project_config(root), RunRequest("events_src"))
    assert outcome.ok and outcome.record.status == "completed"
    assert outcome.record.records_loaded == 6
    failures = [e for e in logs if e["event"] == "run.observer_failed"]
    assert {f["hook"] for f in failures} == {"dlt_ops_run_started", "dlt_ops_run_finished"}
    assert outcome.reports  # the receipts observer still ran and reported its table
    with duckdb.connect(str(root / "events_src_pipeline.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM ds._dlt_ops_receipts").fetchone() == (1,)
