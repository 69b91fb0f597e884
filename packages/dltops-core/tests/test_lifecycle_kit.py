"""The built-in lifecycle plugins (assertions, receipts, alerts, lineage) against the kit."""

from __future__ import annotations

import importlib
import types

import pytest

from dlt_ops.testing import LifecycleObserverSuite

BUILTIN = (
    "dlt_ops.builtin.assertion_gate",
    "dlt_ops.builtin.receipts",
    "dlt_ops.builtin.alerts",
    "dlt_ops.builtin.lineage",
)


class TestBuiltinLifecyclePlugins(LifecycleObserverSuite):
    __test__ = True

    @pytest.fixture(params=BUILTIN)
    def plugin(self, request: pytest.FixtureRequest) -> types.ModuleType:
        return importlib.import_module(str(request.param))
