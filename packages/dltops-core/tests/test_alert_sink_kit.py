"""The built-in alert sinks (``log``, ``webhook``) against the alert-sink conformance kit."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from dlt_ops.alerts import AlertSinkContext, AlertSinkFactory
from dlt_ops.builtin.alert_sinks import LogAlertSink, WebhookAlertSink
from dlt_ops.testing import AlertSinkSuite
from dlt_ops.testing.alert_sinks import Delivered


class TestLogAlertSink(AlertSinkSuite):
    __test__ = True

    @pytest.fixture
    def sink_factory(self) -> AlertSinkFactory:
        return LogAlertSink

    @pytest.fixture
    def logs(self) -> Iterator[list[dict[str, Any]]]:
        with capture_logs() as captured:
            yield captured

    @pytest.fixture
    def delivered(self, logs: list[dict[str, Any]]) -> Delivered:
        return lambda: [entry for entry in logs if entry["event"] == "alert"]


class _Inbox:
    """A real HTTP server on localhost that keeps every POSTed JSON document."""

    def __init__(self) -> None:
        self.documents: list[dict[str, Any]] = []
        inbox = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                inbox.documents.append(json.loads(body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/alerts"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TestWebhookAlertSink(AlertSinkSuite):
    __test__ = True

    @pytest.fixture
    def sink_factory(self) -> AlertSinkFactory:
        return WebhookAlertSink

    @pytest.fixture
    def inbox(self) -> Iterator[_Inbox]:
        inbox = _Inbox()
        yield inbox
        inbox.close()

    @pytest.fixture
    def sink_context(self, tmp_path: Path, inbox: _Inbox) -> AlertSinkContext:
        return AlertSinkContext("webhook", tmp_path, {"url": inbox.url})

    @pytest.fixture
    def delivered(self, inbox: _Inbox) -> Delivered:
        return lambda: list(inbox.documents)

    @pytest.fixture
    def undeliverable_context(self, tmp_path: Path) -> AlertSinkContext:
        url = f"http://127.0.0.1:{_closed_port()}/alerts"
        return AlertSinkContext("webhook", tmp_path, {"url": url, "retries": 0})
