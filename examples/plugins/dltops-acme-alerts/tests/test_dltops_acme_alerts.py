"""The acme_alerts alert sink against dlt-ops' alert-sink kit."""

from __future__ import annotations

import json

import pytest

from dlt_ops.plugin_api import AlertSinkContext
from dlt_ops.testing import AlertSinkSuite
from dltops_acme_alerts.alert_sink import AcmeAlertsAlertSink


class TestAcmeAlertsAlertSink(AlertSinkSuite):
    __test__ = True

    @pytest.fixture
    def sink_factory(self):
        return AcmeAlertsAlertSink

    @pytest.fixture
    def delivered(self, tmp_path):
        path = tmp_path / ".dlt-ops" / "acme_alerts-alerts.jsonl"

        def read():
            lines = path.read_text().splitlines() if path.exists() else []
            return [json.loads(line) for line in lines]

        return read

    @pytest.fixture
    def undeliverable_context(self, tmp_path):
        # the path is a directory: nothing can be appended to it
        return AlertSinkContext("acme_alerts", tmp_path, {"path": "."})
