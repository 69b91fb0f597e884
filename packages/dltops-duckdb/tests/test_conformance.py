"""The DuckDB adapter against the conformance kit, on a real DuckDB file."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlt_ops.adapters import ConnectionTarget
from dlt_ops.testing import DestinationAdapterSuite
from dltops_duckdb.adapter import DuckDBAdapter


class TestDuckDBConformance(DestinationAdapterSuite):
    __test__ = True

    @pytest.fixture
    def adapter(self) -> DuckDBAdapter:
        return DuckDBAdapter()

    @pytest.fixture
    def target(self, dataset: str, tmp_path: Path) -> ConnectionTarget:
        return ConnectionTarget("duckdb", dataset, tmp_path, credentials="kit.duckdb")
