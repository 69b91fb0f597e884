"""DuckDB files resolve against the project root, never the current directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlt_ops.adapters import ConnectionTarget, Statement
from dlt_ops.config import load_project_config
from dlt_ops.destinations import open_session, resolve_destination
from dlt_ops.plugins import PluginRegistry
from dltops_duckdb.adapter import MEMORY, database_path


def _target(root: Path, creds: object, pipeline: str | None = "demo_pipeline") -> ConnectionTarget:
    return ConnectionTarget("duckdb", "ds", root, credentials=creds, pipeline_name=pipeline)


@pytest.mark.parametrize(
    ("creds", "expected"),
    [
        (None, "demo_pipeline.duckdb"),
        ("data/x.duckdb", "data/x.duckdb"),
        ("duckdb:///rel.duckdb", "rel.duckdb"),
        ({"database": "fields.duckdb"}, "fields.duckdb"),
    ],
)
def test_relative_paths_resolve_against_the_root(
    tmp_path: Path, creds: object, expected: str
) -> None:
    assert database_path(_target(tmp_path, creds)) == str(tmp_path / expected)


def test_absolute_paths_and_memory_are_kept(tmp_path: Path) -> None:
    absolute = tmp_path / "elsewhere" / "a.duckdb"
    assert database_path(_target(tmp_path, str(absolute))) == str(absolute)
    assert database_path(_target(tmp_path, ":memory:")) == MEMORY


def test_session_writes_into_the_project_file_whatever_the_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "proj"
    (root / ".dlt").mkdir(parents=True)
    (root / ".dlt" / "config.toml").write_text(
        '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "d"\n'
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    config = load_project_config(root)
    with open_session(PluginRegistry(), config, resolve_destination(config, "demo")) as session:
        session.ensure_dataset()
        assert session.query(Statement("SELECT 1")) == [(1,)]
    assert (root / "demo_pipeline.duckdb").exists()
    assert list(elsewhere.iterdir()) == []
