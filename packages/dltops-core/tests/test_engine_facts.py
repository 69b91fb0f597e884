"""Core knows no engine by name: every engine fact comes from the adapter (or from dlt)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import dlt_ops
from dlt_ops.adapters import Capabilities, DestinationAdapter, SqlAdapterBase

CORE = Path(dlt_ops.__file__).parent
TEXT_FILES = (".py", ".toml", ".md", ".txt", ".json", ".tmpl")
#: an engine's name, also inside identifiers (``dltops_<engine>``) and file patterns; dlt's
#: URL scheme ``postgresql://`` (a SQLAlchemy dialect, e.g. in a source's example) is not one
ENGINE_NAMES = re.compile(r"(?<![a-z])(duckdb|postgres|bigquery)(?![a-z])", re.IGNORECASE)


def test_no_engine_name_in_core_outside_testing() -> None:
    found = []
    for path in sorted(CORE.rglob("*")):
        if not path.is_file() or path.suffix not in TEXT_FILES:
            continue
        if (CORE / "testing") in path.parents:
            continue  # the kit and its server fixtures name the engines they start
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if ENGINE_NAMES.search(line):
                found.append(f"{path.relative_to(CORE)}:{number}: {line.strip()}")
    assert found == [], "engine names in core (move the fact into the adapter):\n" + "\n".join(
        found
    )


def test_optional_members_are_declared_with_defaults() -> None:
    class Minimal(SqlAdapterBase):
        name = "minimal"

    adapter = Minimal()
    assert adapter.dlt_setting_keys == ()
    assert adapter.dlt_destination(None) is None  # type: ignore[arg-type]
    assert adapter.measured_cost(None, "ds", None) is None
    assert isinstance(adapter, DestinationAdapter)
    assert Capabilities().single_writer is False


def test_gated_features_name_only_features_that_exist() -> None:
    from dlt_ops.errors import DestinationCapabilityError
    from dlt_ops.validate.capability import ADAPTER_GATED_FEATURES

    # each names a feature that refuses on a core-tier destination (0.1's six, its order)
    assert ADAPTER_GATED_FEATURES == (
        "runs ledger and status", "checkpoints", "backfill", "clean (remote)", "reconcile",
        "assertion quarantine",
    )  # fmt: skip
    message = str(DestinationCapabilityError("snowflake", ["backfill"], ADAPTER_GATED_FEATURES, []))
    assert 'derived_adapters = ["snowflake"]' in message
    assert "pip install dltops-snowflake" not in message  # no such package


@pytest.mark.parametrize("flag", ["if_exists_ddl"])
def test_if_exists_ddl_is_read(flag: str) -> None:
    class NoGuards(SqlAdapterBase):
        name = "noguards"
        capabilities = Capabilities(if_exists_ddl=False)

    from dlt_ops.adapters import Column, ColumnType, TableSpec

    sql = NoGuards().create_table_sql("ds", TableSpec("t", (Column("a", ColumnType.TEXT),)))
    assert "IF NOT EXISTS" not in sql


def test_hint_helper_calls_are_recorded_by_name_for_any_destination(tmp_path: Path) -> None:
    from dlt_ops.project.ast_scan import scan_text

    text = (
        "from dlt.destinations.adapters import athena_adapter, bigquery_adapter\n"
        "athena_adapter(rows, partition=['day'])\n"
        "bigquery_adapter(rows, cluster=['id'])\n"
    )
    calls = scan_text(tmp_path / "m.py", text).calls
    assert [(c.name, sorted(c.keywords)) for c in calls] == [
        ("athena_adapter", ["partition"]),
        ("bigquery_adapter", ["cluster"]),
    ]


def test_init_starts_on_an_adapter_that_keeps_its_database_in_the_project(
    tmp_path: Path, plugin_registry
) -> None:  # noqa: ANN001
    import types

    from dlt_ops import hookimpl
    from dlt_ops.project.scaffold import FALLBACK_DESTINATION, Starter, starter_destination

    class ServerEngine(SqlAdapterBase):
        name = "aserver"

    class FileEngine(SqlAdapterBase):
        name = "filedb"
        project_files = ("*.filedb",)

    plugin = types.ModuleType("file_engines")

    @hookimpl
    def dlt_ops_register_destinations(register):  # noqa: ANN001, ANN202
        register(ServerEngine, name="aserver")
        register(FileEngine, name="filedb")

    plugin.dlt_ops_register_destinations = dlt_ops_register_destinations  # type: ignore[attr-defined]
    registry = plugin_registry(("destination", "filedb", plugin))
    assert starter_destination(registry) == Starter("filedb", ("*.filedb",))
    assert starter_destination(plugin_registry()) == Starter(FALLBACK_DESTINATION)


def test_init_ignores_the_starter_engines_files(tmp_path: Path) -> None:
    from dlt_ops.config import load_project_config
    from dlt_ops.project.scaffold import init_project, starter_destination

    starter = starter_destination()
    init_project(tmp_path, example=True)
    assert load_project_config(tmp_path).default_destination == starter.destination
    ignored = (tmp_path / ".gitignore").read_text().splitlines()
    assert starter.files and set(starter.files) <= set(ignored)
