"""Derived adapters (dlt's own SQL client) against the conformance kit: SQLite through dlt's
``sqlalchemy`` destination, and DuckDB through the same derived path, so nothing is special-cased.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from dlt_ops.adapters import ConnectionTarget
from dlt_ops.adapters.derived import add_derived_adapters, derive_adapter
from dlt_ops.plugins import PluginRegistry
from dlt_ops.target import Tier, adapter_tier
from dlt_ops.testing import DestinationAdapterSuite


def _registry(engine: str, credentials: object) -> PluginRegistry:
    """Only the derived adapter for ``engine`` (no installed plugin claims it here)."""
    registry = PluginRegistry(entry_points=[])
    add_derived_adapters(registry, [engine], lambda _engine: credentials)
    return registry


class TestDerivedSqlite(DestinationAdapterSuite):
    __test__ = True

    @pytest.fixture
    def url(self, tmp_path: Path) -> str:
        return f"sqlite:///{tmp_path / 'kit.db'}"

    @pytest.fixture
    def adapter(self, url: str) -> Any:
        return derive_adapter("sqlalchemy", url)

    @pytest.fixture
    def target(self, dataset: str, tmp_path: Path, url: str) -> ConnectionTarget:
        return ConnectionTarget("sqlalchemy", dataset, tmp_path, credentials=url)

    @pytest.fixture
    def absent_target(self, target: ConnectionTarget, tmp_path: Path) -> ConnectionTarget:
        root = tmp_path / "absent"
        root.mkdir()
        url = f"sqlite:///{root / 'kit.db'}"
        return dataclasses.replace(target, project_root=root, credentials=url, read_only=True)

    @pytest.fixture
    def registry(self, url: str) -> PluginRegistry:
        return _registry("sqlalchemy", url)


class TestDerivedDuckDB(DestinationAdapterSuite):
    __test__ = True

    @pytest.fixture
    def path(self, tmp_path: Path) -> str:
        return str(tmp_path / "kit.duckdb")

    @pytest.fixture
    def adapter(self, path: str) -> Any:
        return derive_adapter("duckdb", path)

    @pytest.fixture
    def target(self, dataset: str, tmp_path: Path, path: str) -> ConnectionTarget:
        return ConnectionTarget("duckdb", dataset, tmp_path, credentials=path)

    @pytest.fixture
    def absent_target(self, target: ConnectionTarget, tmp_path: Path) -> ConnectionTarget:
        root = tmp_path / "absent"
        root.mkdir()
        path = str(root / "kit.duckdb")
        return dataclasses.replace(target, project_root=root, credentials=path, read_only=True)

    @pytest.fixture
    def registry(self, path: str) -> PluginRegistry:
        return _registry("duckdb", path)


def test_capabilities_come_from_dlt(tmp_path: Path) -> None:
    sqlite = derive_adapter("sqlalchemy", f"sqlite:///{tmp_path / 'x.db'}")
    assert sqlite.timestamps_as_text  # dlt: SQLite keeps no time zone
    assert sqlite.capabilities.transactions and not sqlite.capabilities.single_writer
    duck = derive_adapter("duckdb", str(tmp_path / "x.duckdb"))
    assert not duck.timestamps_as_text
    assert duck.capabilities.max_identifier_length > 63


def test_tier_is_derived_only_where_no_plugin_claims_the_engine() -> None:
    registry = PluginRegistry()  # the installed plugins: the DuckDB adapter among them
    add_derived_adapters(registry, ["sqlalchemy", "duckdb"], lambda _engine: None)
    assert adapter_tier(registry, "sqlalchemy") is Tier.DERIVED
    assert adapter_tier(registry, "duckdb") is Tier.FULL
    assert adapter_tier(registry, "snowflake") is Tier.CORE


def test_only_a_missing_database_file_reads_as_absent(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from dlt_ops.adapters.derived import _names_a_missing_file

    assert _names_a_missing_file(SimpleNamespace(database=str(tmp_path / "gone.db")))
    assert _names_a_missing_file(SimpleNamespace(database=":memory:"))
    (tmp_path / "here.db").write_bytes(b"")
    assert not _names_a_missing_file(SimpleNamespace(database=str(tmp_path / "here.db")))
    assert not _names_a_missing_file(SimpleNamespace(database="analytics"))  # a server's name
    assert not _names_a_missing_file(SimpleNamespace(project_id="p"))  # no database at all
