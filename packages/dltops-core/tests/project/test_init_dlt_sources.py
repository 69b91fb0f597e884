"""``dlt-ops init NAME --source sql_database|rest_api|filesystem``: a project around one of
dlt's own sources that validates as written (running it is tested in tests/, with real servers).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dlt_ops.project import discover

SOURCES = {"sql_database": "database", "rest_api": "api", "filesystem": "files"}


@pytest.mark.parametrize("kind", sorted(SOURCES))
def test_scaffold_validates(cli, tmp_path: Path, kind: str) -> None:
    root = tmp_path / "proj"
    made = cli("init", str(root), "--source", kind)
    assert made.exit_code == 0, made.output
    name = SOURCES[kind]
    assert f"dlt-ops pipeline run -s {name} -y" in made.stdout
    assert "Fill in" in made.stdout
    info = discover(root).source(name)
    assert info.module_path == root / "my_pipeline" / "source" / f"{name}.py"
    validated = cli("--root", str(root), "pipeline", "validate")
    assert validated.exit_code == 0, validated.output
    assert "error" not in validated.stdout.lower(), validated.stdout
    assert "warning" not in validated.stdout.lower(), validated.stdout


def test_unknown_source_kind_writes_nothing(cli, tmp_path: Path) -> None:
    result = cli("init", str(tmp_path / "proj"), "--source", "mongodb")
    assert result.exit_code == 2
    assert "sql_database, rest_api, filesystem" in result.output
    assert not (tmp_path / "proj").exists()


def test_example_and_source_are_exclusive(cli, tmp_path: Path) -> None:
    result = cli("init", str(tmp_path / "proj"), "--source", "rest_api", "--example")
    assert result.exit_code == 2
    assert not (tmp_path / "proj").exists()
