"""The Postgres adapter against the conformance kit, on a real PostgreSQL server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dlt_ops.adapters import ConnectionTarget
from dlt_ops.testing import DestinationAdapterSuite
from dlt_ops.testing.postgres import PostgresServer
from dltops_postgres.adapter import PostgresAdapter


class TestPostgresConformance(DestinationAdapterSuite):
    __test__ = True

    @pytest.fixture
    def adapter(self) -> PostgresAdapter:
        return PostgresAdapter()

    @pytest.fixture
    def target(
        self, dataset: str, tmp_path: Path, postgres_server: PostgresServer
    ) -> ConnectionTarget:
        return ConnectionTarget("postgres", dataset, tmp_path, credentials=postgres_server.url)

    @pytest.fixture
    def connection(self, adapter: PostgresAdapter, target: ConnectionTarget) -> Iterator[Any]:
        dataset = target.dataset
        client = adapter.connect(target)
        yield client
        # Leave the shared server clean: the kit creates one schema per test.
        client.execute(f'DROP SCHEMA IF EXISTS "{dataset}" CASCADE')
        adapter.close(client)
