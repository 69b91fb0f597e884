"""The conformance kit must fail adapters that break the contract, not just pass good ones."""

from __future__ import annotations

import textwrap

import pytest

SUITE = """
from collections.abc import Sequence
from typing import Any

import pytest
from dltops_duckdb.adapter import DuckDBAdapter

from dlt_ops.adapters import ConnectionTarget
from dlt_ops.testing import DestinationAdapterSuite


class FormattingAdapter(DuckDBAdapter):
    '''Formats values into the SQL text instead of binding them.'''

    def _run(self, client: Any, sql: str, params: Sequence[Any], *, fetch: bool) -> Any:
        for value in params:
            literal = "NULL" if value is None else f"'{value}'"
            sql = sql.replace("?", literal, 1)
        return super()._run(client, sql, (), fetch=fetch)


class NoRowcountAdapter(DuckDBAdapter):
    '''Claims rowcount support but always reports 0 rows affected.'''

    def _run(self, client: Any, sql: str, params: Sequence[Any], *, fetch: bool) -> Any:
        result = super()._run(client, sql, params, fetch=fetch)
        return result if fetch else 0


class _Base(DestinationAdapterSuite):
    @pytest.fixture
    def connection(self, adapter, dataset, tmp_path):
        client = adapter.connect(ConnectionTarget("duckdb", dataset, tmp_path, "kit.duckdb"))
        yield client
        adapter.close(client)


class TestFormatting(_Base):
    __test__ = True

    @pytest.fixture
    def adapter(self):
        return FormattingAdapter()


class TestNoRowcount(_Base):
    __test__ = True

    @pytest.fixture
    def adapter(self):
        return NoRowcountAdapter()
"""


@pytest.fixture
def kit_outcomes(pytester: pytest.Pytester) -> dict[str, str]:
    pytester.makepyfile(test_bad_adapters=textwrap.dedent(SUITE))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-q", "-rA")
    outcomes: dict[str, str] = {}
    for line in result.outlines:
        for word in ("PASSED", "FAILED", "ERROR"):
            if line.startswith(word + " "):
                outcomes[line.split()[1].split("::", 1)[1]] = word
    assert outcomes, "\n".join(result.outlines[-30:])
    return outcomes


def test_kit_fails_an_adapter_that_formats_values_into_sql(kit_outcomes: dict[str, str]) -> None:
    assert kit_outcomes["TestFormatting::test_injection_probe_values_stay_data"] == "FAILED"
    # the same kit passes the honest parts of that adapter, so the failure is specific
    assert kit_outcomes["TestFormatting::test_ddl_is_idempotent"] == "PASSED"


def test_kit_fails_an_adapter_without_rowcount(kit_outcomes: dict[str, str]) -> None:
    assert kit_outcomes["TestNoRowcount::test_rows_affected_compare_and_swap"] == "FAILED"
    assert kit_outcomes["TestNoRowcount::test_rows_affected_insert_and_delete"] == "FAILED"
    assert kit_outcomes["TestNoRowcount::test_injection_probe_values_stay_data"] == "PASSED"
