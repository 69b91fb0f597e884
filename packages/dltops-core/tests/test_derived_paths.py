"""A derived adapter's relative SQLite path is anchored at the project root; nothing else moves."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlt_ops.adapters.derived_paths import project_credentials

ROOT = Path("/proj")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("sqlite:///rel.db", "sqlite:////proj/rel.db"),
        ("sqlite:///data/rel.db", "sqlite:////proj/data/rel.db"),
        ("sqlite+pysqlite:///a.db?timeout=5", "sqlite+pysqlite:////proj/a.db?timeout=5"),
        ("SQLite:///rel.db", "SQLite:////proj/rel.db"),
        ("sqlite:////abs/x.db", "sqlite:////abs/x.db"),
        ("sqlite://", "sqlite://"),
        ("sqlite:///:memory:", "sqlite:///:memory:"),
        ("sqlite:///file:x.db?mode=ro&uri=true", "sqlite:///file:x.db?mode=ro&uri=true"),
        ("postgresql://u:p@h/rel.db", "postgresql://u:p@h/rel.db"),
        ("mysql+pymysql://h/db", "mysql+pymysql://h/db"),
        ("rel.db", "rel.db"),  # no scheme: not a SQLAlchemy URL, left to the engine
        (None, None),
    ],
)
def test_connection_strings(given: str | None, expected: str | None) -> None:
    assert project_credentials(given, ROOT) == expected


def test_a_table_of_fields_moves_only_a_sqlite_database() -> None:
    sqlite = {"drivername": "sqlite", "database": "data/x.db"}
    assert project_credentials(sqlite, ROOT) == {
        "drivername": "sqlite",
        "database": "/proj/data/x.db",
    }
    assert sqlite["database"] == "data/x.db"  # the caller's table is not changed
    server = {"drivername": "mysql+pymysql", "database": "x.db", "host": "h"}
    assert project_credentials(server, ROOT) == server
    absolute = {"drivername": "sqlite", "database": "/abs/x.db"}
    assert project_credentials(absolute, ROOT) == absolute


def test_derived_adapter_names_its_sqlite_file_as_the_database_identity(tmp_path: Path) -> None:
    """Two spellings of one file are one database; a server has no file identity."""
    from dlt_ops.adapters import ConnectionTarget
    from dlt_ops.adapters.derived import derive_adapter

    adapter = derive_adapter("sqlalchemy", "sqlite:///x.db")
    rel = ConnectionTarget("sqlalchemy", "ds", tmp_path, credentials="sqlite:///data/x.db")
    absolute = ConnectionTarget(
        "sqlalchemy", "ds", tmp_path, credentials=f"sqlite:///{tmp_path / 'data' / 'x.db'}"
    )
    table = ConnectionTarget(
        "sqlalchemy", "ds", tmp_path, credentials={"drivername": "sqlite", "database": "data/x.db"}
    )
    expected = str(tmp_path / "data" / "x.db")
    assert {adapter.database_identity(t) for t in (rel, absolute, table)} == {expected}
    server = ConnectionTarget("sqlalchemy", "ds", tmp_path, credentials="mysql://u:p@h/db")
    assert adapter.database_identity(server) is None
    memory = ConnectionTarget("sqlalchemy", "ds", tmp_path, credentials="sqlite://")
    assert adapter.database_identity(memory) is None
