"""The built-in ``destination`` ledger sink on DuckDB against the ledger-sink conformance kit."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dlt_ops.adapters import ConnectionTarget, DestinationSession
from dlt_ops.ledger import LedgerSinkContext
from dlt_ops.ledger.destination_sink import DestinationLedgerSink
from dlt_ops.ledger.sinks import LedgerSinkFactory
from dlt_ops.testing import LedgerSinkSuite
from dltops_duckdb.adapter import DuckDBAdapter


class TestDestinationSinkOnDuckDB(LedgerSinkSuite):
    __test__ = True

    @pytest.fixture
    def sink_factory(self) -> LedgerSinkFactory:
        return DestinationLedgerSink

    @pytest.fixture
    def session(self, tmp_path: Path) -> Iterator[DestinationSession]:
        target = ConnectionTarget("duckdb", "kit_ledger", tmp_path, credentials="kit.duckdb")
        with DestinationSession.open(DuckDBAdapter(), target) as session:
            yield session

    @pytest.fixture
    def sink_context(self, tmp_path: Path, session: DestinationSession) -> LedgerSinkContext:
        return LedgerSinkContext(
            name="destination",
            project_root=tmp_path,
            engine="duckdb",
            dataset="kit_ledger",
            full_tier=True,
            open_session=lambda: session,
        )
