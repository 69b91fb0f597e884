"""dlt's sql_database source against a real PostgreSQL schema that changes under it.

* run-time resource lists follow the database: a table added to a reflected schema is listed by
  ``pipeline resources``, runnable with ``-r`` and picked up by a run, with no cache deleted;
* ``init --source sql_database`` scaffolds a source that holds each id once after updates.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.conftest import run_cli, write_project

pytestmark = pytest.mark.integration

CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "raw"

[sources.shop.dlt_ops]
schedule = "@daily"
"""

#: Every table of the ``public`` schema, reflected when the source is called.
SHOP = """
import dlt
from dlt.sources.sql_database import sql_database


@dlt.source(name="shop")
def shop_source(credentials: str = dlt.secrets.value):
    return sql_database(credentials=credentials, schema="public")
"""


def _sql(url: str, *statements: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)


def _table(name: str) -> tuple[str, str]:
    return (
        f"CREATE TABLE {name} (id bigint PRIMARY KEY, note text)",
        f"INSERT INTO {name} VALUES (1, 'a'), (2, 'b')",
    )


@pytest.fixture
def shop(tmp_path: Path, postgres_database: Any) -> Callable[..., Any]:
    root = write_project(tmp_path / "proj", CONFIG, {"shop": SHOP})
    env = {
        "SOURCES__SHOP__CREDENTIALS": postgres_database.dlt_url,
        "DLT_DATA_DIR": str(tmp_path / "dlt-data"),
    }
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("SOURCES__")}, **env}

    def cli(*args: str) -> Any:
        return run_cli("--root", str(root), *args, cwd=root, env=env)

    cli.root = root  # type: ignore[attr-defined]
    _sql(postgres_database.url, *_table("orders"))
    return cli


def _listed(cli: Callable[..., Any], *flags: str) -> list[str]:
    done = cli("pipeline", "list", "--json", *flags)
    assert done.returncode == 0, done.stderr[-2000:]
    (row,) = json.loads(done.stdout)
    return list(row["resources"])


def test_table_added_to_reflected_schema_is_listed_and_runnable(
    shop: Callable[..., Any], postgres_database: Any
) -> None:
    first = shop("pipeline", "resources", "-s", "shop")
    assert "• orders (discovered at run time)" in first.stdout, first.stdout + first.stderr
    assert _listed(shop) == ["orders"]  # cached now: `list` answers from the cache

    _sql(postgres_database.url, *_table("returns"))
    assert _listed(shop) == ["orders"]  # the cache predates the table
    shown = shop("pipeline", "resources", "-s", "shop")  # a reflected source is listed live
    assert "• returns (discovered at run time)" in shown.stdout, shown.stdout + shown.stderr
    assert sorted(_listed(shop)) == ["orders", "returns"]  # ... and the cache follows

    _sql(postgres_database.url, *_table("refunds"))
    run = shop("pipeline", "run", "-s", "shop", "-r", "refunds", "-y")  # a miss looks live
    assert run.returncode == 0, run.stderr[-3000:]
    with duckdb.connect(str(shop.root / "shop_pipeline.duckdb"), read_only=True) as con:  # type: ignore[attr-defined]
        assert con.execute("SELECT count(*) FROM raw.refunds").fetchone() == (2,)
    assert sorted(_listed(shop)) == ["orders", "refunds", "returns"]

    _sql(postgres_database.url, *_table("notes"))
    assert "notes" not in _listed(shop)
    assert "notes" in _listed(shop, "--refresh")  # asked for: live, cache rewritten
    _sql(postgres_database.url, *_table("coupons"))
    full = shop("pipeline", "run", "-s", "shop", "-y")  # a run refreshes the cache too
    assert full.returncode == 0, full.stderr[-3000:]
    assert "coupons" in _listed(shop)

    refused = shop("pipeline", "run", "-s", "shop", "-r", "nowhere", "-y")
    assert refused.returncode == 2
    assert "has no resource(s) nowhere" in refused.stderr
    assert "coupons" in refused.stderr  # the refusal lists the live resources


# -- init --source sql_database ----------------------------------------------------------------


@pytest.mark.parametrize("backend", ["sqlalchemy", "pyarrow"])
def test_scaffolded_source_holds_each_id_once_after_updates(
    tmp_path: Path, postgres_database: Any, backend: str
) -> None:
    from dlt_ops.project.scaffold import SqlOptions, init_project

    url = postgres_database.url
    _sql(
        url,
        "CREATE TABLE orders (id bigint PRIMARY KEY, updated_at timestamptz NOT NULL, "
        "amount bigint NOT NULL)",
        "INSERT INTO orders SELECT i, timestamptz '2026-01-02 00:00+00' + i * interval '1 min', "
        "i FROM generate_series(1, 1000) AS i",
        "CREATE TABLE currencies (code text PRIMARY KEY, name text)",  # no cursor: replaced
        "INSERT INTO currencies VALUES ('EUR', 'euro'), ('USD', 'dollar')",
    )
    root = tmp_path / "scaffold"
    init_project(root, source="sql_database", sql=SqlOptions("public", ("*",), backend))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SOURCES__")},
        "SOURCES__DATABASE__CREDENTIALS": postgres_database.dlt_url,
        "DLT_DATA_DIR": str(tmp_path / "dlt-data"),
    }

    def run() -> None:
        done = run_cli("--root", str(root), "pipeline", "run", "-s", "database", "-y",
                       cwd=tmp_path, env=env)  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]

    run()
    _sql(
        url,  # 200 rows change after the first run, one row is new
        "UPDATE orders SET amount = amount + 1, updated_at = now() WHERE id % 5 = 0",
        "INSERT INTO orders VALUES (1001, now(), 1001)",
    )
    run()
    run()  # nothing changed: still one row per id
    with duckdb.connect(str(root / "database_pipeline.duckdb"), read_only=True) as con:
        count, ids, changed = con.execute(
            "SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE amount = id + 1) "
            "FROM raw_data.orders"
        ).fetchone()
        currencies = con.execute("SELECT count(*) FROM raw_data.currencies").fetchone()
    assert (count, ids, changed) == (1001, 1001, 200)
    assert currencies == (2,)  # replaced on every run, not appended three times
