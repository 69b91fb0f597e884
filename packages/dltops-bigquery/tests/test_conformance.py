"""The BigQuery adapter against the conformance kit.

Runs on the local ``bqemulator`` (started by the ``bigquery_emulator`` session fixture) and, in
the ``live`` lane, on real BigQuery when ``DLTOPS_TEST_BIGQUERY_PROJECT`` and credentials are
set. Every kit test runs on the emulator; the one the engine cannot satisfy
(``test_unique_constraint_is_enforced``) skips from ``capabilities.unique_constraints=False``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from dlt_ops.adapters import ConnectionTarget
from dlt_ops.testing import DestinationAdapterSuite
from dltops_bigquery.adapter import BigQueryAdapter, BigQueryConnection

pytestmark = pytest.mark.integration


class TestBigQueryConformance(DestinationAdapterSuite):
    __test__ = True

    @pytest.fixture
    def adapter(self) -> BigQueryAdapter:
        return BigQueryAdapter()

    @pytest.fixture
    def target(
        self, dataset: str, bigquery_target_factory: Callable[[str], ConnectionTarget]
    ) -> ConnectionTarget:
        return bigquery_target_factory(dataset)

    @pytest.fixture
    def connection(self, adapter: BigQueryAdapter, target: ConnectionTarget) -> Iterator[Any]:
        dataset = target.dataset
        client: BigQueryConnection = adapter.connect(target)
        yield client
        # The kit creates datasets; drop every one this test made, contents and all.
        for name in (dataset, dataset + "_absent"):
            client.bq.delete_dataset(name, delete_contents=True, not_found_ok=True, timeout=30)
        adapter.close(client)
