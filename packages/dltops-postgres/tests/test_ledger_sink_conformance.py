"""The built-in ``destination`` ledger sink on PostgreSQL against the ledger-sink kit."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from dlt_ops.adapters import ConnectionTarget, DestinationSession
from dlt_ops.ledger import LedgerSinkContext
from dlt_ops.ledger.destination_sink import DestinationLedgerSink
from dlt_ops.ledger.sinks import LedgerSinkFactory
from dlt_ops.testing import LedgerSinkSuite
from dlt_ops.testing.postgres import PostgresServer
from dltops_postgres.adapter import PostgresAdapter


class TestDestinationSinkOnPostgres(LedgerSinkSuite):
    __test__ = True

    @pytest.fixture
    def sink_factory(self) -> LedgerSinkFactory:
        return DestinationLedgerSink

    @pytest.fixture
    def dataset(self) -> str:
        return f"kit_ledger_{uuid.uuid4().hex[:10]}"

    @pytest.fixture
    def session(
        self, tmp_path: Path, dataset: str, postgres_server: PostgresServer
    ) -> Iterator[DestinationSession]:
        target = ConnectionTarget("postgres", dataset, tmp_path, credentials=postgres_server.url)
        with DestinationSession.open(PostgresAdapter(), target) as session:
            yield session
            # leave the shared server clean: one schema per test
            session.client.execute(f'DROP SCHEMA IF EXISTS "{dataset}" CASCADE')  # type: ignore[attr-defined]

    @pytest.fixture
    def sink_context(
        self, tmp_path: Path, dataset: str, session: DestinationSession
    ) -> LedgerSinkContext:
        return LedgerSinkContext(
            name="destination",
            project_root=tmp_path,
            engine="postgres",
            dataset=dataset,
            full_tier=True,
            open_session=lambda: session,
        )
