"""The acme_runlog observer against dlt-ops' lifecycle-observer kit."""

from __future__ import annotations

import json

import pytest

import dltops_acme_runlog.plugin
from dlt_ops.testing import LifecycleObserverSuite


class TestAcmeRunlogObserver(LifecycleObserverSuite):
    __test__ = True

    @pytest.fixture
    def plugin(self):
        return dltops_acme_runlog.plugin

    @pytest.fixture
    def observed(self, kit_project):
        path = kit_project / ".dlt-ops" / "acme_runlog-runs.jsonl"

        def read():
            lines = path.read_text().splitlines() if path.exists() else []
            return [json.loads(line)["run_id"] for line in lines]

        return read
