"""Postgres-specific behaviour beyond the conformance kit."""

from __future__ import annotations

import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dlt_ops.adapters import (
    Column,
    ColumnType,
    ConnectionTarget,
    DestinationSession,
    Statement,
    TableSpec,
)
from dlt_ops.errors import DestinationError, IdentifierError
from dlt_ops.testing.postgres import PostgresServer
from dltops_postgres.adapter import PostgresAdapter

LEDGER = TableSpec(
    "ops_runs",
    (
        Column("run_id", ColumnType.TEXT, nullable=False),
        Column("started_at", ColumnType.TIMESTAMPTZ),
        Column("rows", ColumnType.BIGINT),
        Column("ok", ColumnType.BOOLEAN),
        Column("cost", ColumnType.DOUBLE),
    ),
    unique=("run_id",),
)


@pytest.fixture
def dataset() -> str:
    return f"t_pg_{uuid.uuid4().hex[:12]}"


@pytest.fixture
def session(postgres_server: PostgresServer, dataset: str, tmp_path: Path) -> Iterator[Any]:
    target = ConnectionTarget("postgres", dataset, tmp_path, credentials=postgres_server.url)
    with DestinationSession.open(PostgresAdapter(), target) as s:
        yield s
        s.client.execute(f'DROP SCHEMA IF EXISTS "{dataset}" CASCADE')


def test_plugin_and_adapter_modules_do_not_import_psycopg() -> None:
    code = (
        "import sys, dltops_postgres.plugin, dltops_postgres.adapter; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('psycopg', 'dlt')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_rendering_uses_format_placeholders_and_escapes_percent() -> None:
    adapter = PostgresAdapter()
    stmt = Statement("SELECT \"order\" FROM {t} WHERE a = ? AND b LIKE 'x%' AND c = ?")
    assert adapter.render(stmt, "ds") == (
        'SELECT "order" FROM "ds"."t" WHERE a = %s AND b LIKE \'x%%\' AND c = %s'
    )


def test_native_column_types(session: Any) -> None:
    session.ensure_table(LEDGER)
    types = {c.name: c.data_type for c in session.fetch_columns("ops_runs") or []}
    assert types == {
        "run_id": "text",
        "started_at": "timestamp with time zone",
        "rows": "bigint",
        "ok": "boolean",
        "cost": "double precision",
    }


def test_identifiers_up_to_63_characters_round_trip(session: Any) -> None:
    long_name = "t" * 63
    spec = TableSpec(long_name, (Column("c" * 63, ColumnType.TEXT),))
    session.ensure_table(spec)
    assert [c.name for c in session.fetch_columns(long_name) or []] == ["c" * 63]
    with pytest.raises(IdentifierError, match="at most 63"):
        session.adapter.quote_identifier("t" * 64)  # Postgres would silently truncate it


def test_one_connection_serves_the_session(session: Any) -> None:
    pid = Statement("SELECT pg_backend_pid()")
    first = session.query(pid)
    session.ensure_table(LEDGER)
    session.execute(Statement("INSERT INTO {ops_runs} (run_id) VALUES (?)"), "r1")
    assert session.query(pid) == first


def test_nested_transaction_is_a_savepoint(session: Any) -> None:
    session.ensure_table(LEDGER)
    insert = Statement("INSERT INTO {ops_runs} (run_id, rows) VALUES (?, ?)")
    with session.transaction():
        session.execute(insert, "outer", 1)
        with pytest.raises(RuntimeError), session.transaction():
            session.execute(insert, "inner", 2)
            raise RuntimeError("undo the inner block only")
    ids = session.query(Statement("SELECT run_id FROM {ops_runs} ORDER BY run_id"))
    assert ids == [("outer",)]


def test_failed_statement_inside_transaction_rolls_back_everything(session: Any) -> None:
    session.ensure_table(LEDGER)
    insert = Statement("INSERT INTO {ops_runs} (run_id) VALUES (?)")
    session.execute(insert, "dup")
    with pytest.raises(Exception, match="duplicate key"), session.transaction():
        session.execute(insert, "fresh")
        session.execute(insert, "dup")
    assert session.query(Statement("SELECT COUNT(*) FROM {ops_runs}")) == [(1,)]
    assert session.execute(insert, "after") == 1  # the connection is usable again


def test_concurrent_ddl_on_one_dataset_does_not_race(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    """Backfill workers create the same schema and tables at once (CREATE IF NOT EXISTS races)."""
    adapter = PostgresAdapter()
    workers = 6
    for _trial in range(5):
        dataset = f"race_{uuid.uuid4().hex[:10]}"
        target = ConnectionTarget("postgres", dataset, tmp_path, credentials=postgres_server.url)
        clients = [adapter.connect(target) for _ in range(workers)]
        barrier = threading.Barrier(workers)
        errors: list[BaseException] = []

        def work(
            client: Any, dataset: str = dataset, barrier: Any = barrier, errors: list = errors
        ) -> None:
            barrier.wait()
            try:
                adapter.ensure_dataset(client, dataset)
                adapter.create_table(client, dataset, LEDGER)
            except BaseException as exc:  # collected and asserted below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(c,)) for c in clients]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        try:
            assert errors == []
            assert adapter.fetch_columns(clients[0], dataset, LEDGER.name) is not None
        finally:
            clients[0].execute(f'DROP SCHEMA IF EXISTS "{dataset}" CASCADE')
            for client in clients:
                adapter.close(client)


def test_reserved_schema_prefix_is_a_clear_destination_error(session: Any) -> None:
    with pytest.raises(DestinationError, match='prefix "pg_" is reserved'):
        session.adapter.ensure_dataset(session.client, "pg_state")
