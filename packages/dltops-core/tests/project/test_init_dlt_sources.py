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


def test_sql_database_flags_shape_the_scaffold(cli, tmp_path: Path) -> None:
    import tomllib

    root = tmp_path / "proj"
    args = ["--schema", "shop", "--table", "orders", "--table", "refunds", "--backend", "pyarrow"]
    made = cli("init", str(root), "--source", "sql_database", *args)
    assert made.exit_code == 0, made.output
    section = tomllib.loads((root / ".dlt" / "config.toml").read_text())["sources"]["database"]
    assert section["schema"] == "shop" and section["tables"] == ["orders", "refunds"]
    assert section["backend"] == "pyarrow" and section["insert_only"] == []
    module = (root / "my_pipeline" / "source" / "database.py").read_text()
    assert "MERGED on its reflected primary" in module and "insert_only" in module
    assert "a key a row lacked comes back as null" in module  # pyarrow's jsonb, said
    validated = cli("--root", str(root), "pipeline", "validate")
    assert validated.exit_code == 0, validated.output

    every = tmp_path / "every"
    assert cli("init", str(every), "--source", "sql_database", "--table", "*").exit_code == 0
    section = tomllib.loads((every / ".dlt" / "config.toml").read_text())["sources"]["database"]
    assert section["tables"] == [] and "schema" not in section


@pytest.mark.parametrize(
    "args",
    [
        ["--source", "rest_api", "--table", "orders"],
        ["--source", "sql_database", "--backend", "spark"],
        ["--source", "sql_database", "--table", "*", "--table", "orders"],
    ],
)
def test_sql_database_flags_misused_write_nothing(cli, tmp_path: Path, args: list[str]) -> None:
    result = cli("init", str(tmp_path / "proj"), *args)
    assert result.exit_code == 2, result.output
    assert not (tmp_path / "proj").exists()
