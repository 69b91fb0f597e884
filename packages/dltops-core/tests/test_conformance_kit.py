"""The conformance kit must fail adapters that break the contract, not just pass good ones."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

SUITE = """
import sqlite3
from datetime import datetime
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest
from dltops_duckdb.adapter import DuckDBAdapter, database_path

from dlt_ops.adapters import (
    Capabilities, ColumnInfo, ColumnType, ConnectionTarget, SqlAdapterBase,
)
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


class RawNestingAdapter(DuckDBAdapter):
    '''BEGIN/COMMIT with no regard for an enclosing transaction.'''

    @contextmanager
    def transaction(self, client: Any) -> Iterator[None]:
        self._run(client, "BEGIN", (), fetch=False)
        try:
            yield
        except BaseException:
            self._run(client, "ROLLBACK", (), fetch=False)
            raise
        self._run(client, "COMMIT", (), fetch=False)


class CreatesOnReadAdapter(DuckDBAdapter):
    '''Opens read-only targets read-write, creating the database file.'''

    def _open(self, target: ConnectionTarget) -> Any:
        import duckdb

        return duckdb.connect(database_path(target))


_OPEN: set[str] = set()


class OneConnectionAdapter(DuckDBAdapter):
    '''Holds the database exclusively: a second connection is refused.'''

    def _open(self, target: ConnectionTarget) -> Any:
        path = database_path(target)
        if path in _OPEN:
            raise RuntimeError("database is locked by another connection")
        _OPEN.add(path)
        return _Tracked(super()._open(target), path)

    def _close(self, client: Any) -> None:
        _OPEN.discard(client.path)
        client.inner.close()


class _Tracked:
    def __init__(self, inner: Any, path: str) -> None:
        self.inner, self.path = inner, path

    def execute(self, *args: Any) -> Any:
        return self.inner.execute(*args)


class StaleStampAdapter(DuckDBAdapter):
    # claims the content never changes: status would show yesterday's runs forever

    def content_stamp(self, target):
        return "always-the-same"


class MisalignedInsertAdapter(DuckDBAdapter):
    # a bulk insert that orders each column on its own: every value lands, rows come apart

    def insert_rows(self, client, dataset, spec, rows):
        columns = [sorted(c, key=lambda v: (v is None, str(v))) for c in zip(*rows)]
        return super().insert_rows(client, dataset, spec, list(zip(*columns)))


class LocalOffsetTextAdapter(DuckDBAdapter):
    # timestamps kept as text in each value's own offset: they round-trip, but SQL compares
    # the text, so an instant at 10:00-08:00 sorts before one at 12:00+02:00

    type_names = {**DuckDBAdapter.type_names, ColumnType.TIMESTAMPTZ: "VARCHAR"}

    def _run(self, client, sql, params, *, fetch):
        bound = [p.isoformat() if isinstance(p, datetime) else p for p in params]
        result = super()._run(client, sql, bound, fetch=fetch)
        if not fetch:
            return result
        return [tuple(_stamp(v) for v in row) for row in result]


def _stamp(value):
    if isinstance(value, str) and len(value) >= 25 and value[10:11] == "T":
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            return value
    return value


class SqliteAdapter(SqlAdapterBase):
    '''sqlite3, one file; a dataset is a table-name prefix.'''

    name = "kit_sqlite"
    capabilities = Capabilities(create_schema=False, max_identifier_length=60)
    check_same_thread = False

    def _open(self, target: ConnectionTarget) -> Any:
        path = target.project_root / "kit.sqlite"
        if target.read_only and not path.exists():
            path = ":memory:"
        return sqlite3.connect(
            path, isolation_level=None, check_same_thread=self.check_same_thread, timeout=60
        )

    def _run(self, client: Any, sql: str, params: Sequence[Any], *, fetch: bool) -> Any:
        cursor = client.execute(sql, tuple(params))
        return cursor.fetchall() if fetch else cursor.rowcount

    def _close(self, client: Any) -> None:
        client.close()

    def _begin(self, client: Any) -> None:
        self._run(client, "BEGIN IMMEDIATE", (), fetch=False)  # the write lock up front

    def table_ref(self, dataset: str, table: str) -> str:
        self.quote_identifier(dataset), self.quote_identifier(table)
        return self.quote_identifier(f"{dataset}__{table}")

    def fetch_columns(self, client: Any, dataset: str, table: str) -> Any:
        ref = self.table_ref(dataset, table)
        rows = self._run(client, f"PRAGMA table_info({ref})", (), fetch=True)
        return [ColumnInfo(r[1], r[2]) for r in rows] or None


class DeferredSqliteAdapter(SqliteAdapter):
    '''SQLite's plain BEGIN: the write lock is taken at the first write, so of two
    transactions that both read first, the second writer gets "database is locked" at once.'''

    def _begin(self, client: Any) -> None:
        self._run(client, "BEGIN", (), fetch=False)


class SameThreadSqliteAdapter(SqliteAdapter):
    '''sqlite3's default: a connection refuses every thread but the one that opened it.'''

    check_same_thread = True


class _Base(DestinationAdapterSuite):
    @pytest.fixture
    def target(self, dataset, tmp_path):
        return ConnectionTarget("duckdb", dataset, tmp_path, "kit.duckdb")


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


class TestRawNesting(_Base):
    __test__ = True

    @pytest.fixture
    def adapter(self):
        return RawNestingAdapter()


class TestCreatesOnRead(_Base):
    __test__ = True

    @pytest.fixture
    def adapter(self):
        return CreatesOnReadAdapter()


class TestOneConnection(_Base):
    __test__ = True

    @pytest.fixture
    def adapter(self):
        return OneConnectionAdapter()


class TestStaleStamp(_Base):
    __test__ = True

    @pytest.fixture
    def adapter(self):
        return StaleStampAdapter()


class TestMisalignedInsert(_Base):
    __test__ = True

    @pytest.fixture
    def adapter(self):
        return MisalignedInsertAdapter()


class TestSqlite(_Base):
    __test__ = True

    @pytest.fixture
    def adapter(self):
        return SqliteAdapter()


class TestLocalOffsetText(_Base):
    __test__ = True

    @pytest.fixture
    def adapter(self):
        return LocalOffsetTextAdapter()


class TestDeferredSqlite(_Base):
    __test__ = True

    @pytest.fixture
    def adapter(self):
        return DeferredSqliteAdapter()


class TestSameThreadSqlite(_Base):
    __test__ = True

    @pytest.fixture
    def adapter(self):
        return SameThreadSqliteAdapter()
"""


@pytest.fixture(scope="module")
def kit_outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Run the kit once on every bad adapter above; ``{"TestX::test_y": outcome}``."""
    where = tmp_path_factory.mktemp("kit")
    (where / "test_bad_adapters.py").write_text(textwrap.dedent(SUITE))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA", "--no-header"],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = result.stdout.splitlines()
    outcomes: dict[str, str] = {}
    for line in lines:
        for word in ("PASSED", "FAILED", "ERROR"):
            if line.startswith(word + " "):
                outcomes[line.split()[1].split("::", 1)[1]] = word
    assert outcomes, "\n".join(lines[-30:]) + result.stderr[-2000:]
    return outcomes


def test_kit_fails_an_adapter_that_formats_values_into_sql(kit_outcomes: dict[str, str]) -> None:
    assert kit_outcomes["TestFormatting::test_injection_probe_values_stay_data"] == "FAILED"
    # the same kit passes the honest parts of that adapter, so the failure is specific
    assert kit_outcomes["TestFormatting::test_ddl_is_idempotent"] == "PASSED"


def test_kit_fails_an_adapter_without_rowcount(kit_outcomes: dict[str, str]) -> None:
    assert kit_outcomes["TestNoRowcount::test_rows_affected_compare_and_swap"] == "FAILED"
    assert kit_outcomes["TestNoRowcount::test_rows_affected_insert_and_delete"] == "FAILED"
    assert kit_outcomes["TestNoRowcount::test_injection_probe_values_stay_data"] == "PASSED"


def test_kit_fails_an_adapter_whose_connection_refuses_other_threads(
    kit_outcomes: dict[str, str],
) -> None:
    # sqlite3's default check_same_thread=True: the heartbeat thread could never write
    assert (
        kit_outcomes["TestSameThreadSqlite::test_connection_used_from_a_second_thread"] == "FAILED"
    )
    assert kit_outcomes["TestSqlite::test_connection_used_from_a_second_thread"] == "PASSED"
    assert kit_outcomes["TestSameThreadSqlite::test_ddl_is_idempotent"] == "PASSED"


def test_kit_fails_an_adapter_that_cannot_nest_transactions(kit_outcomes: dict[str, str]) -> None:
    assert kit_outcomes["TestRawNesting::test_nested_transaction_joins_the_outer_one"] == "FAILED"
    assert kit_outcomes["TestRawNesting::test_transaction_rolls_back_on_error"] == "PASSED"
    assert kit_outcomes["TestSqlite::test_nested_transaction_joins_the_outer_one"] == "PASSED"


def test_kit_fails_an_adapter_whose_reader_creates_the_database(
    kit_outcomes: dict[str, str],
) -> None:
    name = "test_read_only_look_at_an_absent_database_reads_empty"
    assert kit_outcomes[f"TestCreatesOnRead::{name}"] == "FAILED"
    assert kit_outcomes[f"TestFormatting::{name}"] == "PASSED"
    assert kit_outcomes[f"TestSqlite::{name}"] == "PASSED"


def test_kit_fails_an_adapter_that_allows_one_writer(kit_outcomes: dict[str, str]) -> None:
    assert kit_outcomes["TestOneConnection::test_two_concurrent_writers"] == "FAILED"
    assert kit_outcomes["TestOneConnection::test_connection_used_from_a_second_thread"] == "PASSED"
    assert kit_outcomes["TestSqlite::test_two_concurrent_writers"] == "PASSED"


def test_kit_fails_an_adapter_whose_content_stamp_survives_a_write(
    kit_outcomes: dict[str, str],
) -> None:
    assert kit_outcomes["TestStaleStamp::test_content_stamp_never_outlives_a_write"] == "FAILED"
    assert kit_outcomes["TestFormatting::test_content_stamp_never_outlives_a_write"] == "PASSED"


def test_kit_fails_an_adapter_whose_bulk_insert_mixes_up_rows(
    kit_outcomes: dict[str, str],
) -> None:
    name = "test_insert_rows_lands_every_row_in_order"
    assert kit_outcomes[f"TestMisalignedInsert::{name}"] == "FAILED"
    # the honest DuckDB bulk form passes (the default multi-row VALUES is run by the kit on
    # the derived adapters and on PostgreSQL and BigQuery)
    assert kit_outcomes[f"TestStaleStamp::{name}"] == "PASSED"


def test_kit_fails_an_adapter_that_keeps_timestamps_as_local_offset_text(
    kit_outcomes: dict[str, str],
) -> None:
    # the round trip alone passes it (each value parses back to its instant) ...
    assert kit_outcomes["TestLocalOffsetText::test_timestamptz_round_trip"] == "PASSED"
    # ... comparing instants whose wall-clock order is the reverse of their order in time fails
    name = "test_timestamptz_compares_instants_across_offsets"
    assert kit_outcomes[f"TestLocalOffsetText::{name}"] == "FAILED"
    assert kit_outcomes[f"TestFormatting::{name}"] == "PASSED"


def test_kit_fails_an_adapter_with_plain_deferred_sqlite_transactions(
    kit_outcomes: dict[str, str],
) -> None:
    name = "test_two_concurrent_transactions_both_commit"
    assert kit_outcomes[f"TestDeferredSqlite::{name}"] == "FAILED"
    assert kit_outcomes[f"TestSqlite::{name}"] == "PASSED"  # BEGIN IMMEDIATE
    assert kit_outcomes[f"TestFormatting::{name}"] == "PASSED"
    cas = "test_compare_and_swap_in_concurrent_transactions_has_one_winner"
    assert kit_outcomes[f"TestSqlite::{cas}"] == "PASSED"
    assert kit_outcomes[f"TestFormatting::{cas}"] == "PASSED"
    # single statements outside a transaction never met the problem
    assert kit_outcomes["TestDeferredSqlite::test_two_concurrent_writers"] == "PASSED"
