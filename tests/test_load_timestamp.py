"""``[dlt_ops] load_timestamp_column``: every row of every table a run loads carries the run's
start time (tz-aware UTC), one value per run, on DuckDB, PostgreSQL and BigQuery (emulator).

The source has two resources, one of them with a nested list (a child table dlt derives), so
"every table" means three: ``orders``, ``orders__lines`` and ``customers``. Two runs: each run's
rows carry that run's value, the same in every table; the second run's value is later.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

SOURCE = """
import dlt


@dlt.resource(name="orders", write_disposition="append")
def orders():
    yield [{"id": i, "lines": [{"sku": "a"}, {"sku": "b"}]} for i in range(3)]


@dlt.resource(name="customers", write_disposition="append")
def customers():
    yield {"id": 1, "name": "ada"}
    yield {"id": 2, "name": "bob"}


@dlt.source(name="{name}")
def {name}_source():
    return orders, customers
"""

CONFIG = """
[dlt_ops]
default_destination = "{engine}"
default_dataset = "{dataset}"
load_timestamp_column = "loaded_at"

[sources.shop.dlt_ops]
schedule = "@daily"
"""

TABLES = ("orders", "orders__lines", "customers")
#: rows each run adds per table
PER_RUN = {"orders": 3, "orders__lines": 6, "customers": 2}


def _run_twice(cli: Callable[..., Any], root: Path, env: dict[str, str] | None = None) -> None:
    for _ in range(2):
        run = cli("pipeline", "run", "-s", "shop", "-y", cwd=root, env=env)
        assert run.returncode == 0, run.stderr[-3000:]


def _started_at(value: Any) -> datetime:
    assert isinstance(value, datetime) and value.tzinfo is not None, value
    return value.astimezone(UTC)


def _check(stamps: dict[str, list[Any]]) -> None:
    """``stamps``: table -> the column's value on every row. Every row carries a value; each
    run's value is one across all tables; the two runs differ, the second later."""
    per_table = {}
    for table in TABLES:
        values = stamps[table]
        assert len(values) == 2 * PER_RUN[table], (table, values)
        assert None not in values, table
        per_table[table] = sorted({_started_at(v) for v in values})
        assert len(per_table[table]) == 2, (table, per_table[table])
    first, second = per_table["orders"]
    assert all(v == [first, second] for v in per_table.values()), per_table
    assert first < second
    for table in TABLES:  # each run's rows, not just its value, are all there
        counts = [sum(_started_at(v) == t for v in stamps[table]) for t in (first, second)]
        assert counts == [PER_RUN[table]] * 2, (table, counts)


def test_duckdb_every_row_of_every_table_carries_the_runs_start(project, cli) -> None:  # noqa: ANN001
    import duckdb

    root = project(CONFIG.format(engine="duckdb", dataset="ds"), {"shop": SOURCE})
    _run_twice(cli, root)
    with duckdb.connect(str(root / "shop_pipeline.duckdb"), read_only=True) as con:
        stamps = {t: [r[0] for r in con.execute(f"SELECT loaded_at FROM ds.{t}").fetchall()]
                  for t in TABLES}  # fmt: skip
        (started,) = con.execute(
            "SELECT started_at FROM ds._dlt_ops_runs ORDER BY started_at LIMIT 1"
        ).fetchone()
        kind = con.execute(
            "SELECT data_type FROM information_schema.columns "
            "WHERE table_name = 'orders' AND column_name = 'loaded_at'"
        ).fetchone()
    _check(stamps)
    assert min(_started_at(v) for v in stamps["orders"]) == _started_at(started)
    assert kind == ("TIMESTAMP WITH TIME ZONE",)


def test_postgres_every_row_of_every_table_carries_the_runs_start(
    project, cli, postgres_database
) -> None:  # noqa: ANN001
    import psycopg

    root = project(CONFIG.format(engine="postgres", dataset="ds"), {"shop": SOURCE})
    (root / ".dlt" / "secrets.toml").write_text(
        f'[destination.postgres]\ncredentials = "{postgres_database.dlt_url}"\n'
    )
    _run_twice(cli, root)
    with psycopg.connect(postgres_database.url) as con:
        stamps = {t: [r[0] for r in con.execute(f"SELECT loaded_at FROM ds.{t}").fetchall()]
                  for t in TABLES}  # fmt: skip
        started = con.execute("SELECT min(started_at) FROM ds._dlt_ops_runs").fetchone()
    _check(stamps)
    assert min(_started_at(v) for v in stamps["orders"]) == _started_at(started[0])


@pytest.mark.integration
@pytest.mark.filterwarnings("ignore:Cannot create BigQuery Storage client:UserWarning")
def test_bigquery_every_row_of_every_table_carries_the_runs_start(
    project, cli, bigquery_emulator, bigquery_cli_env
) -> None:  # noqa: ANN001
    dataset = f"stamp_{uuid.uuid4().hex[:10]}"
    root = project(CONFIG.format(engine="bigquery", dataset=dataset), {"shop": SOURCE})
    env = bigquery_cli_env(bigquery_emulator, root)
    _run_twice(cli, root, env)
    client = bigquery_emulator.client()
    stamps = {
        t: [r[0] for r in client.query(f"SELECT loaded_at FROM `{dataset}.{t}`").result()]
        for t in TABLES
    }
    _check(stamps)
