"""Project root discovery and typed config loading."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dlt_ops.config import find_project_root, load_project_config
from dlt_ops.errors import (
    ConfigError,
    ConfigParseError,
    ConfigValueError,
    ProjectRootNotFoundError,
    UnresolvedDatasetError,
    UnresolvedDestinationError,
)


def _project(root: Path, text: str) -> Path:
    (root / ".dlt").mkdir(parents=True, exist_ok=True)
    (root / ".dlt" / "config.toml").write_text(text)
    return root


def test_root_is_found_from_a_subdirectory(tmp_path: Path) -> None:
    root = _project(tmp_path / "proj", "[dlt_ops]\n")
    deep = root / "a" / "b"
    deep.mkdir(parents=True)
    assert find_project_root(start=deep) == root.resolve()


def test_config_without_dlt_ops_table_is_not_a_root(tmp_path: Path) -> None:
    _project(tmp_path, "[runtime]\nlog_level = 'INFO'\n")
    with pytest.raises(ProjectRootNotFoundError, match="dlt-ops init"):
        find_project_root(start=tmp_path)


def test_explicit_root_is_verified_not_widened(tmp_path: Path) -> None:
    _project(tmp_path, "[dlt_ops]\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    with pytest.raises(ProjectRootNotFoundError, match="not a dlt-ops project root"):
        find_project_root(explicit=sub)
    assert find_project_root(explicit=tmp_path) == tmp_path.resolve()


def test_malformed_toml_names_the_file_and_stops_the_walk(tmp_path: Path) -> None:
    _project(tmp_path, "[dlt_ops]\n")
    bad = _project(tmp_path / "inner", "[dlt_ops\n")
    with pytest.raises(ConfigParseError) as err:
        find_project_root(start=bad)
    assert str(bad / ".dlt" / "config.toml") in str(err.value)
    assert err.value.exit_code == 2


def test_wrong_type_names_file_key_and_expected_type(tmp_path: Path) -> None:
    _project(tmp_path, '[dlt_ops]\nstaleness_days = "seven"\n')
    with pytest.raises(ConfigValueError) as err:
        load_project_config(tmp_path)
    message = str(err.value)
    assert "config.toml" in message and "staleness_days" in message
    assert "a positive integer" in message and "'seven'" in message


def test_wrong_type_in_a_source_section(tmp_path: Path) -> None:
    _project(tmp_path, "[dlt_ops]\n[sources.demo.dlt_ops]\ninjected_columns = 'loaded_at'\n")
    with pytest.raises(ConfigValueError, match=r"sources.demo.dlt_ops\] injected_columns"):
        load_project_config(tmp_path)


def test_unknown_keys_are_warnings_with_a_suggestion(tmp_path: Path) -> None:
    _project(
        tmp_path,
        "[dlt_ops]\nstaleness_dayz = 3\n[sources.demo.dlt_ops]\nschedul = '@daily'\n",
    )
    config = load_project_config(tmp_path)
    messages = [w.message for w in config.warnings]
    assert any("staleness_dayz" in m and "did you mean 'staleness_days'" in m for m in messages)
    assert any("schedul" in m and "did you mean 'schedule'" in m for m in messages)


def test_typed_values_and_resolution_ladders(tmp_path: Path) -> None:
    _project(
        tmp_path,
        """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "main_data"
ledger_sinks = ["destination", "jsonl"]
connect_timeout = 3

[dlt_ops.plugins.destination]
duckdb = "dltops-duckdb"

[sources.a.dlt_ops]
schedule = "@daily"
dataset = "a_data"

[sources.b.dlt_ops]
schedule = "@weird"
destination = "postgres"
""",
    )
    config = load_project_config(tmp_path)
    assert config.ledger_sinks == ("destination", "jsonl")
    assert config.connect_timeout == 3.0
    assert config.plugins == {"destination": {"duckdb": "dltops-duckdb"}}
    assert config.dataset_for("a") == "a_data"
    assert config.dataset_for("a", "cli_override") == "cli_override"
    assert config.dataset_for("b") == "main_data"
    assert config.destination_for("b") == "postgres"
    assert config.source("a").schedule_valid and not config.source("b").schedule_valid


def test_unresolved_destination_and_dataset(tmp_path: Path) -> None:
    _project(tmp_path, "[dlt_ops]\n")
    config = load_project_config(tmp_path)
    with pytest.raises(UnresolvedDestinationError, match="default_destination"):
        config.destination_for("x")
    with pytest.raises(UnresolvedDatasetError, match="default_dataset"):
        config.dataset_for("x")


def test_unknown_plugin_kind_in_picks(tmp_path: Path) -> None:
    _project(tmp_path, '[dlt_ops]\n[dlt_ops.plugins.storage]\nx = "y"\n')
    with pytest.raises(ConfigError, match="unknown plugin kind 'storage'"):
        load_project_config(tmp_path)


CLI = "import sys; sys.argv = ['dlt-ops', *sys.argv[1:]]; from dlt_ops.cli import main; main()"


def test_cli_reports_config_errors_in_one_line_with_exit_2(tmp_path: Path) -> None:
    _project(tmp_path, "[dlt_ops]\nstaleness_days = -1\n")
    proc = subprocess.run(
        [sys.executable, "-c", CLI, "--root", str(tmp_path), "plugins", "list"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ},
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: ") and "staleness_days" in proc.stderr


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    _project(tmp_path, "[dlt_ops\n")
    proc = subprocess.run(
        [sys.executable, "-c", CLI, "--debug", "--root", str(tmp_path), "plugins", "list"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2 and "Traceback" in proc.stderr and "malformed TOML" in proc.stderr
