"""``pipeline clean`` end to end, on DuckDB and PostgreSQL: the dry run changes nothing, a full
clean leaves only the ledger history and one audit row, the next run loads everything again;
selective, orphan, local-only and refusals."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.test_reconcile import Target, build_target

SOURCE_TABLES = {"shop_orders", "shop_orders__items", "customers"}


@pytest.fixture(params=["duckdb", "postgres"])
def target(request: pytest.FixtureRequest, project: Any, cli: Any) -> Target:
    return build_target(request.param, request, project, cli)


def _ledger(target: Target) -> list[tuple[Any, ...]]:
    return target.query(
        "SELECT run_id, status, trigger_source, error_summary FROM ds._dlt_ops_runs "
        "ORDER BY started_at"
    )


def _mentions_shop(row: str) -> bool:
    return "'shop" in row or "shop_" in row


def test_dry_run_changes_nothing_and_a_full_clean_leaves_only_the_ledger(target: Target) -> None:
    target.run()
    target.run(SHOP_EXTRA="1")  # a merge (staging dataset), receipts, a second schema version
    assert target.cli("pipeline", "reconcile", "-s", "shop").returncode == 0  # drift rows
    before = target.dump()
    assert SOURCE_TABLES <= {t for s, t in target.tables() if s == "ds"}

    dry = target.cli("pipeline", "clean", "-s", "shop", "--dry-run", "--json")
    assert dry.returncode == 0, dry.stderr[-3000:]
    plan = json.loads(dry.stdout)["plan"]
    assert set(plan["tables"]) == SOURCE_TABLES
    assert plan["schema_names"] == ["shop"]
    assert {"_dlt_pipeline_state", "_dlt_loads", "_dlt_version", "_dlt_ops_receipts",
            "_dlt_ops_drift"} <= set(plan["rows"])  # fmt: skip
    assert target.dump() == before  # the dry run changed nothing

    history = _ledger(target)
    done = target.cli("pipeline", "clean", "-s", "shop", "-y")
    assert done.returncode == 0, done.stderr[-3000:]
    left = {t for s, t in target.tables() if s == "ds"}
    assert not (SOURCE_TABLES & left)
    for table, rows in target.dump().items():
        if table.endswith("_dlt_ops_runs"):
            continue
        assert not [r for r in rows if _mentions_shop(r)], (table, rows)
    ledger = _ledger(target)
    assert ledger[: len(history)] == history  # the history is kept
    (audit,) = ledger[len(history) :]  # plus exactly one audit row
    assert audit[1] == "completed" and audit[2] == "cli"
    assert audit[3].startswith("clean: ") and "table shop_orders__items" in audit[3]
    assert not list((target.root / ".dlt-ops" / "pipelines").rglob("shop_pipeline"))

    target.run()  # everything loads again, from scratch
    assert len(target.query("SELECT id FROM ds.shop_orders")) == 3
    assert len(target.query("SELECT sku FROM ds.shop_orders__items")) == 3
    assert len(target.query("SELECT id FROM ds.customers")) == 2


def test_selective_clean_drops_one_resource_and_keeps_the_other(target: Target) -> None:
    target.run()
    done = target.cli("pipeline", "clean", "-s", "shop", "-r", "orders", "-y")
    assert done.returncode == 0, done.stderr[-3000:]
    left = {t for s, t in target.tables() if s == "ds"}
    assert "shop_orders" not in left and "shop_orders__items" not in left
    assert len(target.query("SELECT id FROM ds.customers")) == 2
    target.run()
    assert len(target.query("SELECT id FROM ds.shop_orders")) == 3
    assert len(target.query("SELECT sku FROM ds.shop_orders__items")) == 3


def test_refusals_change_nothing(project: Any, cli: Any, request: Any) -> None:
    target = build_target("duckdb", request, project, cli)
    target.run()
    before = target.dump()
    pattern = target.cli("pipeline", "clean", "-s", "shop", "-r", "re:ord.*", "-y")
    assert pattern.returncode == 2 and "exact names" in pattern.stderr
    unknown = target.cli("pipeline", "clean", "-s", "shop", "-r", "nope", "-y")
    assert unknown.returncode == 2 and "customers" in unknown.stderr
    both = target.cli("pipeline", "clean", "-s", "shop", "--local-only", "--remote-only", "-y")
    assert both.returncode == 2
    assert target.dump() == before


def test_orphan_clean_by_name(project: Any, cli: Any, request: Any) -> None:
    target = build_target("duckdb", request, project, cli)
    target.run()
    (target.root / "my_pipeline" / "source" / "shop.py").unlink()  # the code is gone
    done = target.cli("pipeline", "clean", "-s", "shop", "-y")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "cleaning by name" in done.stdout
    assert not (SOURCE_TABLES & {t for s, t in target.tables() if s == "ds"})


def test_local_only_works_at_core_tier_and_the_remote_half_refuses(project: Any, cli: Any) -> None:
    config = (
        '[dlt_ops]\ndefault_destination = "filesystem"\ndefault_dataset = "ds"\n'
        '[sources.shop.dlt_ops]\nschedule = "@daily"\n'
    )
    root = project(config, {"shop": "import dlt\n"})
    working = root / ".dlt-ops" / "pipelines" / "shop_pipeline"
    working.mkdir(parents=True)
    (working / "state.json").write_text("{}")
    remote = cli("pipeline", "clean", "-s", "shop", "-y", cwd=root)
    assert remote.returncode == 1 and "--local-only" in remote.stderr
    assert working.exists()  # refused before anything
    local = cli("pipeline", "clean", "-s", "shop", "--local-only", "-y", cwd=root)
    assert local.returncode == 0, local.stderr[-3000:]
    assert not working.exists()


@pytest.mark.parametrize("engine", ["duckdb", "postgres"])
def test_a_live_run_is_refused(
    engine: str, project: Any, cli: Any, request: Any, blocking_run: Any
) -> None:
    target = build_target(engine, request, project, cli)
    (target.root / "my_pipeline" / "source" / "slow.py").write_text(
        (request.getfixturevalue("templates")["blocking"]).replace("{name}", "slow")
    )
    config = target.root / ".dlt" / "config.toml"
    config.write_text(config.read_text() + '\n[sources.slow.dlt_ops]\nschedule = "@daily"\n')
    proc = blocking_run(target.root, "slow")
    try:
        refused = target.cli("pipeline", "clean", "-s", "slow", "-y")
        assert refused.returncode == 1, refused.stderr[-3000:]
        assert "already running" in refused.stderr and "nothing was done" in refused.stderr
        assert f"pid {proc.pid}" in refused.stderr  # the holder is named
    finally:
        (target.root.parent / "slow.release").write_text("go")  # the fixture's release file
        proc.communicate(timeout=120)
    sql = "SELECT status FROM ds._dlt_ops_runs WHERE source_section = 'slow'"
    if engine == "duckdb":  # the slow source has its own database file
        import duckdb

        with duckdb.connect(str(target.root / "slow_pipeline.duckdb")) as conn:
            ledger = conn.execute(sql).fetchall()
    else:
        ledger = target.query(sql)
    assert ledger == [("completed",)]  # the refused clean wrote no audit row


def test_a_failed_remote_half_keeps_local_state_for_a_retry(
    project: Any, cli: Any, request: Any
) -> None:
    target = build_target("postgres", request, project, cli)
    target.run()
    # a view on a source table makes PostgreSQL refuse the drop halfway through the plan
    target.query("CREATE VIEW ds.customer_names AS SELECT name FROM ds.customers")
    failed = target.cli("pipeline", "clean", "-s", "shop", "-y")
    assert failed.returncode == 1
    assert "Local state was kept for a retry" in failed.stderr
    assert list((target.root / ".dlt-ops" / "pipelines").rglob("shop_pipeline"))
    (audit,) = [r for r in _ledger(target) if (r[3] or "").startswith("clean: ")]
    assert audit[1] == "failed" and "failed after removing" in audit[3]

    target.query("DROP VIEW ds.customer_names")
    retried = target.cli("pipeline", "clean", "-s", "shop", "-y")
    assert retried.returncode == 0, retried.stderr[-3000:]
    assert not (SOURCE_TABLES & {t for s, t in target.tables() if s == "ds"})
    assert not list((target.root / ".dlt-ops" / "pipelines").rglob("shop_pipeline"))
