"""Validate and the window preflight on dlt's own sources: sql_database, rest_api, filesystem.

Real objects throughout: sql_table reflects a real SQLite file, rest_api builds its resources
from a config (no request is made until extract), filesystem lists a real folder.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from dlt_ops import errors

SQL_SOURCE = """
from datetime import datetime, timezone

import dlt
from dlt.sources.sql_database import sql_table


@dlt.source(name="{name}")
def {name}_source(credentials: str = dlt.secrets.value):
    return sql_table(credentials=credentials, table="orders", incremental=INCREMENTAL)
"""
NO_INITIAL = 'dlt.sources.incremental("updated_at")'
DATETIME_INITIAL = (
    'dlt.sources.incremental("updated_at", initial_value=datetime(2026, 1, 1, tzinfo=timezone.utc))'
)

REST_SOURCE = """
import dlt
from dlt.sources.rest_api import rest_api_resources


@dlt.source(name="{name}")
def {name}_source():
    return rest_api_resources({
        "client": {"base_url": "http://127.0.0.1:9/"},
        "resources": [{
            "name": "events",
            "endpoint": {
                "path": "events",
                "params": {"since": "{incremental.start_value}"},
                "incremental": {"cursor_path": "updated_at",
                                "initial_value": "2026-01-01T00:00:00Z"},
            },
        }],
    })
"""

FS_SOURCE = """
import dlt
from dlt.sources.filesystem import filesystem, read_csv


@dlt.source(name="{name}")
def {name}_source(bucket_url: str = dlt.config.value):
    files = filesystem(bucket_url=bucket_url, file_glob="*.csv")
    files.apply_hints(incremental=dlt.sources.incremental("modification_date"))
    return (files | read_csv()).with_name("orders")
"""


@pytest.fixture
def sqlite_db(tmp_path: Path) -> str:
    path = tmp_path / "shop.db"
    with sqlite3.connect(path) as db:
        db.execute("create table orders (id integer primary key, updated_at timestamp, total int)")
    return f"sqlite:///{path}"


def sql_project(make_project, h, url: str, incremental: str = NO_INITIAL) -> Path:
    src = SQL_SOURCE.replace("{name}", "shop").replace("INCREMENTAL", incremental)
    secrets = f'[sources.shop]\ncredentials = "{url}"\n'
    return make_project({"p/source/shop.py": src, ".dlt/secrets.toml": secrets}, h.section("shop"))


def test_plain_sql_table_source_validates(make_project, run_validate, h, sqlite_db) -> None:
    report = run_validate(sql_project(make_project, h, sqlite_db))
    assert report.errors == []  # reflected columns are not "columns= as dict"
    [warning] = h.by_rule(report, "incremental_accepts_window")
    assert "Resource 'orders' cannot be backfilled" in warning.message
    assert "no initial_value" in warning.message and "initial_value=datetime(" in warning.message
    root = sql_project(make_project, h, sqlite_db, DATETIME_INITIAL)
    assert run_validate(root).findings == []


def test_rest_api_resource_findings_say_what_to_do(make_project, run_validate, h) -> None:
    root = make_project({"p/source/api.py": REST_SOURCE.replace("{name}", "api")},
                        h.section("api"))  # fmt: skip
    report = run_validate(root)
    [model] = h.by_rule(report, "pydantic_columns_required")
    assert "dlt's rest_api source builds it" in model.message
    assert '"columns": MyModel' in model.message
    assert "[sources.api.dlt_ops.rule_exemptions] pydantic_columns_required" in model.message
    [window] = h.by_rule(report, "incremental_accepts_window")
    assert "'2026-01-01T00:00:00Z'" in window.message and "processing_steps" in window.message


def test_filesystem_reader_findings(make_project, run_validate, h, tmp_path) -> None:
    (tmp_path / "files").mkdir()
    root = make_project({"p/source/files.py": FS_SOURCE.replace("{name}", "files")},
                        f'[sources.files]\nbucket_url = "{tmp_path / "files"}"\n'
                        + h.section("files"))  # fmt: skip
    report = run_validate(root)
    [model] = h.by_rule(report, "pydantic_columns_required")
    assert "filesystem readers infer column types" in model.message
    # the cursor lives on the piped filesystem() resource, and has no initial value
    [window] = h.by_rule(report, "incremental_accepts_window")
    assert "Resource 'orders'" in window.message


@pytest.fixture
def loaded(make_project, h):
    """``load(root, name)`` → (config, registry, info, instantiated source)."""
    from dlt_ops.config import load_project_config
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.project import discover
    from dlt_ops.project.introspect import load_source
    from dlt_ops.project.loader import use_project_dir

    def load(root: Path, name: str):
        config = load_project_config(root)
        result = load_source(discover(root), config, name)
        use_project_dir(root, refresh=True)  # this process saw other projects before
        return config, PluginRegistry(), result.info, result.source_fn()

    return load


def test_window_preflight_refuses_incremental_without_datetime(
    make_project, h, sqlite_db, loaded
) -> None:
    from dlt_ops.validate.preflight import run_preflight

    args = loaded(sql_project(make_project, h, sqlite_db), "shop")
    run_preflight(*args)  # a plain run is fine
    with pytest.raises(errors.IncrementalWindowError) as caught:
        run_preflight(*args, window=True)
    assert caught.value.exit_code == 2 and caught.value.resources == ("orders",)
    assert "resource 'orders': its incremental has no initial_value" in str(caught.value)
    assert "Fix: give initial_value a datetime" in str(caught.value)
    args = loaded(sql_project(make_project, h, sqlite_db, DATETIME_INITIAL), "shop")
    run_preflight(*args, window=True)


def test_window_preflight_refuses_rest_api_string_initial_value(make_project, h, loaded) -> None:
    from dlt_ops.validate.preflight import run_preflight

    root = make_project({"p/source/api.py": REST_SOURCE.replace("{name}", "api")},
                        h.section("api"))  # fmt: skip
    with pytest.raises(errors.IncrementalWindowError, match="processing_steps") as caught:
        run_preflight(*loaded(root, "api"), window=True)
    assert "resource 'events'" in str(caught.value)


def test_window_preflight_sees_sql_table_without_incremental(
    make_project, h, sqlite_db, loaded
) -> None:
    """sql_table always carries an (empty) incremental wrapper: that is no cursor."""
    from dlt_ops.validate.preflight import run_preflight

    root = sql_project(make_project, h, sqlite_db, "None")
    with pytest.raises(errors.MissingIncrementalCursorError, match="orders"):
        run_preflight(*loaded(root, "shop"), window=True)


def test_opting_out_of_external_schedulers_is_refused(make_project, h, loaded) -> None:
    from dlt_ops.validate.preflight import run_preflight

    src = h.good_source("alpha").replace(
        "def rows():",
        'def rows(ts=dlt.sources.incremental("id", initial_value=0, '
        "allow_external_schedulers=False)):",
    )
    root = make_project({"p/source/alpha.py": src}, h.section("alpha"))
    with pytest.raises(errors.IncrementalWindowError, match="allow_external_schedulers=False"):
        run_preflight(*loaded(root, "alpha"), window=True)


def test_cursor_rule_says_how_for_sql_table(make_project, run_validate, h, sqlite_db) -> None:
    root = sql_project(make_project, h, sqlite_db, "None")
    config = root / ".dlt" / "config.toml"
    switch = "\n[dlt_ops.rules]\nincremental_cursor_required = true\n"
    config.write_text(config.read_text() + switch)
    [found] = h.by_rule(run_validate(root), "incremental_cursor_required")
    assert "Resource 'orders'" in found.message
    assert "sql_table(..., incremental=dlt.sources.incremental(" in found.message
