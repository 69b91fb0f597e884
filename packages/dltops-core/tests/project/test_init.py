"""``dlt-ops init``: what it writes, what it refuses, and that the result discovers cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlt_ops.config import load_project_config
from dlt_ops.project import discover
from dlt_ops.project.scaffold import GITIGNORE_LINES, init_project


def test_plain_init(cli, tmp_path: Path) -> None:
    result = cli(*["init", str(tmp_path / "demo")])
    assert result.exit_code == 0, result.output
    root = tmp_path / "demo"
    config = load_project_config(root)
    assert config.default_destination == "duckdb"
    assert config.default_dataset
    assert config.warnings == ()
    ignored = (root / ".gitignore").read_text().splitlines()
    assert set(GITIGNORE_LINES) <= set(ignored)
    assert (root / "my_pipeline/source/.gitkeep").exists()
    assert discover(root).sources == {}


def test_example_init(cli, tmp_path: Path) -> None:
    result = cli(*["init", str(tmp_path / "demo"), "--example", "-p", "pipes"])
    assert result.exit_code == 0, result.output
    assert "dlt-ops pipeline run -s demo_events -y" in result.output
    steps = result.output[result.output.index("Next steps:") :]
    assert steps.index("pipeline validate") < steps.index("pipeline run")  # as the README says
    root = tmp_path / "demo"
    config = load_project_config(root)
    assert config.source("demo_events").schedule == "@daily"
    assert config.dataset_for("demo_events") == "demo_data"
    info = discover(root).source("demo_events")
    assert info.static_resources == ("events",)
    assert info.pipeline == "pipes"


def test_refuses_existing_project(cli, tmp_path: Path) -> None:
    init_project(tmp_path)
    before = (tmp_path / ".dlt/config.toml").read_text()
    result = cli(*["init", str(tmp_path), "--example"])
    assert result.exit_code == 1
    assert "already exists" in result.stderr
    assert (tmp_path / ".dlt/config.toml").read_text() == before
    assert not (tmp_path / "my_pipeline/source/demo_events.py").exists()


@pytest.mark.parametrize("name", ["_private", "1abc", "my-pipe", "a b"])
def test_invalid_pipeline_name_writes_nothing(cli, tmp_path: Path, name: str) -> None:
    result = cli(*["init", str(tmp_path / "demo"), "-p", name])
    assert result.exit_code == 2
    assert not (tmp_path / "demo").exists()


def test_existing_gitignore_is_appended_not_replaced(cli, tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("node_modules/\n")
    init_project(tmp_path)
    lines = (tmp_path / ".gitignore").read_text().splitlines()
    assert lines[0] == "node_modules/"
    assert ".dlt-ops/" in lines


def test_destination_names_the_default_and_its_adapters_files(cli, tmp_path: Path) -> None:
    root = tmp_path / "pg"
    result = cli(*["init", str(root), "--destination", "postgres"])
    assert result.exit_code == 0, result.output
    assert load_project_config(root).default_destination == "postgres"
    assert "core tier" not in result.output  # dltops-postgres is installed here
    ignored = (root / ".gitignore").read_text().splitlines()
    assert "*.duckdb" not in ignored  # the starter engine's files only when it is the starter
    assert "[destination.postgres.credentials]" in (root / ".dlt/secrets.toml").read_text()
    duck = tmp_path / "duck"
    assert cli(*["init", str(duck), "-d", "duckdb"]).exit_code == 0
    assert {"*.duckdb", "*.duckdb.wal"} <= set((duck / ".gitignore").read_text().splitlines())


def test_a_plugin_adapters_project_files_reach_gitignore(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    from importlib.metadata import EntryPoint

    from dlt_ops.plugins import PluginRegistry

    (tmp_path / "site").mkdir()
    (tmp_path / "site/acme_lite_adapter.py").write_text(
        "from dlt_ops import hookimpl\n"
        "from dlt_ops.adapters import SqlAdapterBase\n\n"
        "class LiteAdapter(SqlAdapterBase):\n"
        "    name = 'acmelite'\n"
        "    project_files = ('*.acmelite', 'acmelite-journal/')\n\n"
        "@hookimpl\n"
        "def dlt_ops_register_destinations(register):\n"
        "    register(LiteAdapter, name='acmelite')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    eps = [EntryPoint("acmelite", "acme_lite_adapter", "dlt_ops.destination")]
    init_project(tmp_path / "p", destination="acmelite", registry=PluginRegistry(entry_points=eps))
    ignored = (tmp_path / "p/.gitignore").read_text().splitlines()
    assert {"*.acmelite", "acmelite-journal/"} <= set(ignored)
    assert load_project_config(tmp_path / "p").default_destination == "acmelite"


def test_an_engine_without_an_adapter_is_core_tier_and_said_so(cli, tmp_path: Path) -> None:
    result = cli(*["init", str(tmp_path / "s"), "--destination", "snowflake"])
    assert result.exit_code == 0, result.output
    assert "no dlt-ops adapter for 'snowflake'" in result.output and "core tier" in result.output
    assert load_project_config(tmp_path / "s").default_destination == "snowflake"


@pytest.mark.parametrize("name", ["Post-gres", "a b", "x\ny", ""])
def test_a_bad_destination_name_writes_nothing(cli, tmp_path: Path, name: str) -> None:
    result = cli(*["init", str(tmp_path / "demo"), "--destination", name])
    assert result.exit_code == 2, result.output
    assert "is not a destination name" in result.stderr
    assert not (tmp_path / "demo").exists()
