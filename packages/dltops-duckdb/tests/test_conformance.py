"""The DuckDB adapter against the conformance kit, on a real DuckDB file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

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
    def connection(self, adapter: DuckDBAdapter, dataset: str, tmp_path: Path) -> Iterator[Any]:
        target = ConnectionTarget("duckdb", dataset, tmp_path, credentials="kit.duckdb")
        client = adapter.connect(target)
        yield client
        adapter.close(client)
