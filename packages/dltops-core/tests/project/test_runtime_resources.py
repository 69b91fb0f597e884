"""``pipeline list`` / ``pipeline resources`` show resources that dlt's own sources build at run
time: from one sandboxed look, then from the facts cache without importing dlt."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SQL_DATABASE = """
import dlt
from dlt.sources.sql_database import sql_database


@dlt.source(name="shop")
def shop_source(credentials: str = dlt.secrets.value):
    return sql_database(credentials=credentials)
"""

CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "raw"

[sources.shop.dlt_ops]
schedule = "@daily"
"""


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    db = tmp_path / "shop.db"
    with sqlite3.connect(db) as conn:
        conn.execute("create table orders (id integer primary key, updated_at timestamp)")
        conn.execute("create table customers (id integer primary key, name text)")
    root = tmp_path / "proj"
    (root / ".dlt").mkdir(parents=True)
    (root / ".dlt" / "config.toml").write_text(textwrap.dedent(CONFIG))
    (root / ".dlt" / "secrets.toml").write_text(f'[sources.shop]\ncredentials = "sqlite:///{db}"\n')
    (root / "p" / "source").mkdir(parents=True)
    (root / "p" / "source" / "shop.py").write_text(SQL_DATABASE)
    return root


def test_resources_of_sql_database_are_discovered_at_run_time(cli, shop: Path) -> None:
    text = cli("--root", str(shop), "pipeline", "resources", "-s", "shop")
    assert text.exit_code == 0, text.output
    assert "Resources (2):" in text.stdout
    assert "• customers (discovered at run time)" in text.stdout
    assert "• orders (discovered at run time)" in text.stdout
    js = cli("--root", str(shop), "pipeline", "resources", "-s", "shop", "--json")
    assert sorted(json.loads(js.stdout)) == ["customers", "orders"]
    static = cli("--root", str(shop), "pipeline", "resources", "-s", "shop", "--json", "--static")
    assert json.loads(static.stdout) == []
    listed = cli("--root", str(shop), "pipeline", "list")
    assert "2*" in listed.stdout and "discovered at run time" in listed.stdout
    [row] = json.loads(cli("--root", str(shop), "pipeline", "list", "--json").stdout)
    assert sorted(row["runtime_resources"]) == ["customers", "orders"]


def _imports_dlt(*argv: str) -> tuple[str, bool]:
    code = (
        "import sys; from dlt_ops.cli import run; sys.argv = ['dlt-ops', *sys.argv[1:]]\n"
        "try:\n    run()\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write('DLT:' + str('dlt' in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True)
    assert out.stderr.strip().endswith(("DLT:False", "DLT:True")), out.stderr[-500:]
    return out.stdout, out.stderr.strip().endswith("DLT:True")


def test_a_second_look_comes_from_the_cache_without_dlt(cli, shop: Path) -> None:
    assert cli("--root", str(shop), "pipeline", "resources", "-s", "shop").exit_code == 0
    stdout, dlt_imported = _imports_dlt("--root", str(shop), "pipeline", "list", "--json")
    [row] = json.loads(stdout)
    assert sorted(row["resources"]) == ["customers", "orders"]
    assert not dlt_imported
    # `resources` of a source that reflects a database looks live: a new table shows up
    stdout, dlt_imported = _imports_dlt("--root", str(shop), "pipeline", "resources", "-s",
                                        "shop", "--json")  # fmt: skip
    assert sorted(json.loads(stdout)) == ["customers", "orders"]
    assert dlt_imported


def test_a_failed_look_says_why(cli, shop: Path) -> None:
    (shop / ".dlt" / "secrets.toml").unlink()
    out = cli("--root", str(shop), "pipeline", "resources", "-s", "shop")
    assert out.exit_code == 0
    assert "Resources (0):" in out.stdout
    assert "importing and calling it failed" in out.stdout and "credentials" in out.stdout


def test_a_failed_live_look_of_a_reflected_source_falls_back_to_the_cache(cli, shop: Path) -> None:
    assert cli("--root", str(shop), "pipeline", "resources", "-s", "shop").exit_code == 0
    db = shop.parent / "shop.db"  # the database goes away (same config: the same cache key)
    db.unlink()
    db.mkdir()  # a directory where the file was: sqlite cannot open it
    out = cli("--root", str(shop), "pipeline", "resources", "-s", "shop")
    assert out.exit_code == 0
    assert "Resources (2):" in out.stdout  # the list an earlier look cached
    assert "(listed from the cache of an earlier look)" in out.stdout
