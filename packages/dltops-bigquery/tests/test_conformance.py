"""The BigQuery adapter against the conformance kit.

Runs on the local ``bqemulator`` (started by the ``bigquery_emulator`` session fixture) and, in
the ``live`` lane, on real BigQuery when ``DLTOPS_TEST_BIGQUERY_PROJECT`` and credentials are
set. Every kit test runs on the emulator; the one the engine cannot satisfy
(``test_unique_constraint_is_enforced``) skips from ``capabilities.unique_constraints=False``,
the two that run transactions on two sessions at once and the one that alters a table are
strict xfails there (the emulator's limits, not BigQuery's: see ``_emulator_limits``).
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

    # bqemulator 1.4.0 runs every session on one DuckDB connection: a second session's BEGIN
    # fails ("cannot start a transaction within a transaction") and aborts the first one. Real
    # BigQuery runs concurrent sessions; the live lane runs these as the kit wrote them.
    _ONE_SESSION_AT_A_TIME = pytest.mark.xfail(
        strict=True, reason="bqemulator: one transaction at a time across sessions"
    )

    @pytest.fixture(autouse=True)
    def _emulator_limits(self, request: pytest.FixtureRequest) -> None:
        concurrent = (
            "test_two_concurrent_transactions_both_commit",
            "test_compare_and_swap_in_concurrent_transactions_has_one_winner",
        )
        callspec = getattr(request.node, "callspec", None)
        on_emulator = (
            callspec is not None and callspec.params.get("bigquery_target_factory") == "emulator"
        )
        if request.node.originalname in concurrent and on_emulator:
            request.applymarker(self._ONE_SESSION_AT_A_TIME)
        if request.node.originalname == self._ALTERED and on_emulator:
            request.applymarker(self._STALE_CATALOG)

    # bqemulator 1.4.0 runs ALTER TABLE ... ADD COLUMN but its INFORMATION_SCHEMA.COLUMNS keeps
    # the table's first columns, so a second look adds the column again ("already exists").
    # Real BigQuery's catalog shows the column; the live lane runs the test as written.
    _ALTERED = "test_evolving_table_gains_missing_columns_and_keeps_rows"
    _STALE_CATALOG = pytest.mark.xfail(
        strict=True, reason="bqemulator: INFORMATION_SCHEMA misses columns added by ALTER TABLE"
    )
