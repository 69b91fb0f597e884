"""``pipeline reconcile`` end to end, on DuckDB and PostgreSQL: drift in a renamed table and in
a nested child table is reported, alerted once, reproducible, acknowledged; type and missing
columns; removal drift; a broken ``--all`` sweep exits 1."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

#: Orders (renamed table ``shop_orders``, nested ``items`` unnested into a child table) and
#: customers. ``SHOP_EXTRA=1`` adds a column the model does not declare to each table;
#: ``SHOP_NO_NOTE=1`` leaves the declared ``note`` column empty. The rows' own ``loaded_at`` is
#: overwritten by the run's start ([dlt_ops] load_timestamp_column).
SHOP = """
import os
from datetime import datetime, timezone
from typing import ClassVar, Optional

import dlt
from pydantic import BaseModel, ConfigDict


class Item(BaseModel):
    model_config = ConfigDict(extra="allow")
    sku: str
    qty: int


class Order(BaseModel):
    model_config = ConfigDict(extra="allow")
    dlt_config: ClassVar[dict] = {"skip_nested_types": True}
    id: int
    kind: str
    note: Optional[str] = None
    loaded_at: datetime
    items: list[Item]


class Customer(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: int
    name: str


def _orders():
    extra = os.environ.get("SHOP_EXTRA") == "1"
    at = datetime.now(timezone.utc)
    first = int(os.environ.get("SHOP_FIRST_ID", "1"))
    for i in range(first, first + 3):
        item = {"sku": "s%d" % i, "qty": i}
        row = {"id": i, "kind": "k", "loaded_at": at, "items": [item]}
        if os.environ.get("SHOP_NO_NOTE") != "1":
            row["note"] = "n%d" % i
        if extra:
            row["coupon"] = "c%d" % i
            item["gift"] = True
        yield row


@dlt.resource(name="orders", primary_key="id", write_disposition="merge", columns=Order,
              table_name="shop_orders")
def orders():
    yield list(_orders())


@dlt.resource(name="customers", primary_key="id", write_disposition="merge", columns=Customer)
def customers():
    yield [{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}]


@dlt.source(name="{name}")
def {name}_source():
    return orders, customers
"""

CONFIG = """
[dlt_ops]
default_destination = "{destination}"
default_dataset = "ds"
load_timestamp_column = "loaded_at"
{extra}

[sources.shop.dlt_ops]
schedule = "@daily"
"""


@dataclass
class Target:
    """A project on one engine, the CLI bound to it, and raw SQL against its database."""

    root: Path
    engine: str
    query: Callable[[str], list[tuple[Any, ...]]]
    run_cli: Callable[..., Any]
    env: dict[str, str] = field(default_factory=dict)

    def cli(self, *args: str, **env: str) -> Any:
        return self.run_cli(*args, cwd=self.root, env={**self.env, **env})

    def run(self, **env: str) -> None:
        done = self.cli("pipeline", "run", "-s", "shop", "-y", **env)
        assert done.returncode == 0, done.stderr[-3000:]

    def tables(self) -> list[tuple[str, str]]:
        catalog = " AND table_catalog = current_database()" if self.engine == "duckdb" else ""
        return sorted(
            (str(s), str(t))
            for s, t in self.query(
                "SELECT table_schema, table_name FROM information_schema.tables "
                f"WHERE table_schema IN ('ds', 'ds_staging'){catalog}"
            )
        )

    def dump(self) -> dict[str, list[str]]:
        """Every table of the dataset and its staging dataset, with every row."""
        return {
            f"{s}.{t}": sorted(repr(r) for r in self.query(f'SELECT * FROM "{s}"."{t}"'))
            for s, t in self.tables()
        }


@pytest.fixture(params=["duckdb", "postgres"])
def target(request: pytest.FixtureRequest, project: Any, cli: Any) -> Target:
    return build_target(request.param, request, project, cli)


def build_target(engine: str, request: Any, project: Any, cli: Any, extra: str = "") -> Target:
    """A shop project on ``engine`` (PostgreSQL: a fresh database of the suite's server)."""
    config = CONFIG.format(destination=engine, extra=textwrap.dedent(extra))
    root = project(config, {"shop": SHOP})
    if engine == "duckdb":
        import duckdb

        def query(sql: str) -> list[tuple[Any, ...]]:
            with duckdb.connect(str(root / "shop_pipeline.duckdb")) as conn:
                return conn.execute(sql).fetchall()

        return Target(root, engine, query, cli)
    import psycopg

    db = request.getfixturevalue("postgres_database")
    (root / ".dlt" / "secrets.toml").write_text(
        f'[destination.postgres]\ncredentials = "{db.dlt_url}"\n'
    )

    def pg_query(sql: str) -> list[tuple[Any, ...]]:
        with psycopg.connect(db.url, autocommit=True) as conn:
            cur = conn.execute(sql)
            return cur.fetchall() if cur.description else []

    return Target(root, engine, pg_query, cli)


def _alerts(stderr: str) -> list[dict[str, Any]]:
    """The ``log`` alert sink's lines (one JSON object per alert)."""
    out = []
    for line in stderr.splitlines():
        if line.startswith("{") and '"event": "alert"' in line:
            out.append(json.loads(line))
    return out


def _by_column(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    (source,) = doc["sources"]
    assert source["error"] is None, source
    return {(f["table"], f["column"]): f for f in source["findings"]}


def test_drift_is_reported_alerted_once_reproducible_and_acknowledged(target: Target) -> None:
    target.run()
    clean = target.cli("pipeline", "reconcile", "-s", "shop", "--fail-on", "drift")
    assert clean.returncode == 0, clean.stderr[-3000:]
    assert "No drift" in clean.stdout
    target.run(SHOP_EXTRA="1")  # new columns arrive; nobody updated the models

    first = target.cli("pipeline", "reconcile", "-s", "shop", "--json")
    assert first.returncode == 0, first.stderr[-3000:]  # findings alone never fail
    found = _by_column(json.loads(first.stdout))
    assert set(found) == {("shop_orders", "coupon"), ("shop_orders__items", "gift")}
    assert all(f["kind"] == "additive" and f["new"] for f in found.values())
    (alert,) = _alerts(first.stderr)
    assert alert["kind"] == "schema_drift" and alert["source"] == "shop"
    assert {(d["table"], d["column"]) for d in alert["drift"]} == set(found)
    for finding in found.values():  # the reproduce query returns the drifted rows as written
        assert len(target.query(finding["reproduce_sql"])) == 3

    second = target.cli("pipeline", "reconcile", "-s", "shop", "--json", "--fail-on", "drift")
    assert second.returncode == 1
    assert _alerts(second.stderr) == []  # the same drift is not alerted again
    again = _by_column(json.loads(second.stdout))
    assert set(again) == set(found)
    for key, finding in again.items():
        assert not finding["new"]
        assert finding["first_seen_at"] == found[key]["first_seen_at"]  # really the first time
        assert finding["last_seen_at"] > finding["first_seen_at"]

    acked = target.cli("pipeline", "reconcile", "-s", "shop", "--ack")
    assert acked.returncode == 0, acked.stderr[-3000:]
    after = target.cli("pipeline", "reconcile", "-s", "shop", "--fail-on", "drift")
    assert after.returncode == 0, after.stdout + after.stderr[-3000:]
    assert "acknowledged" in after.stdout


def test_dry_run_alerts_nobody_and_writes_no_state(project: Any, cli: Any, request: Any) -> None:
    target = build_target("duckdb", request, project, cli)
    target.run(SHOP_EXTRA="1")
    before = target.dump()
    dry = target.cli("pipeline", "reconcile", "-s", "shop", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr[-3000:]
    assert len(_by_column(json.loads(dry.stdout))) == 2
    assert _alerts(dry.stderr) == []
    assert target.dump() == before  # no _dlt_ops_drift, no row anywhere
    real = target.cli("pipeline", "reconcile", "-s", "shop")
    assert len(_alerts(real.stderr)) == 1  # the dry run did not use up the first alert


def test_type_drift_and_a_missing_column(project: Any, cli: Any, request: Any) -> None:
    target = build_target("duckdb", request, project, cli)
    target.run()
    before = target.dump()
    # someone patched the table by hand: a type changed, a declared column dropped
    target.query('ALTER TABLE ds.customers ALTER COLUMN "name" TYPE BIGINT USING length("name")')
    target.query("ALTER TABLE ds.shop_orders DROP COLUMN kind")
    patched = target.dump()
    done = target.cli("pipeline", "reconcile", "-s", "shop", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    found = _by_column(json.loads(done.stdout))
    assert found[("customers", "name")]["kind"] == "type"
    assert "declared text" in found[("customers", "name")]["detail"]
    assert found[("shop_orders", "kind")]["kind"] == "missing"
    assert found[("shop_orders", "kind")]["reproduce_sql"] is None
    assert len(target.query(found[("customers", "name")]["reproduce_sql"])) == 2
    # reconcile reads the data tables, never writes them
    after = target.dump()
    assert {k: v for k, v in after.items() if "_dlt_ops" not in k} == {
        k: v for k, v in patched.items() if "_dlt_ops" not in k
    }
    assert before.keys() <= after.keys()


def test_removal_drift_flags_a_column_that_stopped_arriving(
    project: Any, cli: Any, request: Any
) -> None:
    extra = "[dlt_ops.reconcile]\nrecent_window_hours = 2\n"
    target = build_target("duckdb", request, project, cli, extra=extra)
    target.run()  # note filled in; the run stamps its rows with its start, moved a day back:
    target.query("UPDATE ds.shop_orders SET loaded_at = loaded_at - INTERVAL '30 hours'")
    idle = target.cli("pipeline", "reconcile", "-s", "shop", "--include-removal", "--json")
    assert _by_column(json.loads(idle.stdout)) == {}  # no recent rows: never flags
    target.run(SHOP_FIRST_ID="10", SHOP_NO_NOTE="1")  # now: note stopped arriving
    done = target.cli("pipeline", "reconcile", "-s", "shop", "--include-removal", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    found = _by_column(json.loads(done.stdout))
    assert set(found) == {("shop_orders", "note")}
    assert found[("shop_orders", "note")]["kind"] == "removal"
    assert len(target.query(found[("shop_orders", "note")]["reproduce_sql"])) == 3


def test_a_broken_sweep_exits_1(project: Any, cli: Any, request: Any) -> None:
    target = build_target("duckdb", request, project, cli)
    broken = target.root / "my_pipeline" / "source" / "broken.py"
    broken.write_text("def broken_source(:\n")
    done = target.cli("pipeline", "reconcile", "--all", "--json")
    assert done.returncode == 1
    reports = {s["source"]: s for s in json.loads(done.stdout)["sources"]}
    assert any("discovery" in (s["error"] or "") for s in reports.values())
    assert reports["shop"]["error"] is None  # the healthy source was still reconciled
    assert cli("pipeline", "reconcile", cwd=target.root).returncode == 2  # -s or --all


def test_a_never_run_duckdb_source_is_reported_without_creating_its_database(
    project: Any, cli: Any, request: Any
) -> None:
    target = build_target("duckdb", request, project, cli)
    done = target.cli("pipeline", "reconcile", "-s", "shop", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    (source,) = json.loads(done.stdout)["sources"]
    assert source["error"] is None and source["findings"] == []
    assert any("never loaded" in note for note in source["notes"]), source
    assert not (target.root / "shop_pipeline.duckdb").exists()  # reading made nothing
