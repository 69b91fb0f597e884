"""The litefile adapter against dlt-ops' destination-adapter kit."""

from __future__ import annotations

import dataclasses

import pytest

from dlt_ops.adapters import ConnectionTarget
from dlt_ops.testing import DestinationAdapterSuite
from dltops_litefile.adapter import LitefileAdapter


class TestLitefileAdapter(DestinationAdapterSuite):
    __test__ = True

    @pytest.fixture
    def adapter(self):
        return LitefileAdapter()

    @pytest.fixture
    def target(self, dataset, tmp_path):
        return ConnectionTarget("litefile", dataset, tmp_path, credentials="kit.sqlite")

    @pytest.fixture
    def absent_target(self, target, tmp_path):
        root = tmp_path / "absent"
        root.mkdir()
        return dataclasses.replace(target, project_root=root, read_only=True)
