"""The built-in trigger emitters (every one, through its entry point) against the kit."""

from __future__ import annotations

import pytest

from dlt_ops.testing import TriggerEmitterSuite
from dlt_ops.triggers.protocol import TRIGGER_EMITTER, TriggerEmitter

BUILTIN = ("cli", "backfill", "y-scheduler", "airflow", "dagster", "cron", "github-actions")


class TestBuiltinEmitters(TriggerEmitterSuite):
    __test__ = True

    @pytest.fixture(params=BUILTIN)
    def name(self, request: pytest.FixtureRequest) -> str:
        return str(request.param)

    @pytest.fixture
    def emitter(self, name: str) -> TriggerEmitter:
        from dlt_ops.plugins import PluginRegistry

        return PluginRegistry().get(TRIGGER_EMITTER, name)
