"""The litefile destination adapter: one SQLite file, a dataset as a prefix.

SQLite has no schemas and no ``information_schema``, so the adapter overrides what
``SqlAdapterBase`` assumes there: ``table_ref`` (``"<dataset>__<table>"`` instead of a
schema-qualified name) and ``fetch_columns`` (``PRAGMA table_info``). Timestamps travel as
fixed-width UTC text, so text comparison orders instants.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dlt_ops.adapters import Capabilities, ColumnInfo, ColumnType, ConnectionTarget, SqlAdapterBase

_UTC_TEXT = "%Y-%m-%d %H:%M:%S.%f+00:00"
_UTC_TEXT_RE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}\+00:00")


def database_path(target: ConnectionTarget) -> Path:
    """``credentials`` as a path (relative to the project root), else ``litefile.sqlite``."""
    path = Path(str(target.credentials)) if target.credentials else Path("litefile.sqlite")
    return path if path.is_absolute() else target.project_root / path


class LitefileAdapter(SqlAdapterBase):
    """SQLite through the standard library's sqlite3."""

    name = "litefile"
    capabilities = Capabilities(create_schema=False, max_identifier_length=60)
    type_names = {**SqlAdapterBase.type_names, ColumnType.TIMESTAMPTZ: "TEXT"}
    project_files = ("*.sqlite",)

    def _open(self, target: ConnectionTarget) -> Any:
        path = database_path(target)
        if target.read_only and not path.exists():
            return sqlite3.connect(":memory:", check_same_thread=False)  # never create it
        # any thread may call (the run's heartbeat), autocommit outside transaction()
        return sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=60)

    def _run(self, client: Any, sql: str, params: Sequence[Any], *, fetch: bool) -> Any:
        cursor = client.execute(sql, tuple(_bind(p) for p in params))
        if fetch:
            return [tuple(_read(v) for v in row) for row in cursor.fetchall()]
        return cursor.rowcount

    def _close(self, client: Any) -> None:
        client.close()

    def _begin(self, client: Any) -> None:
        self._run(client, "BEGIN IMMEDIATE", (), fetch=False)  # take the write lock up front

    def table_ref(self, dataset: str, table: str) -> str:
        self.quote_identifier(dataset), self.quote_identifier(table)
        return self.quote_identifier(f"{dataset}__{table}")

    def fetch_columns(self, client: Any, dataset: str, table: str) -> list[ColumnInfo] | None:
        sql = f"PRAGMA table_info({self.table_ref(dataset, table)})"
        rows = self._run(client, sql, (), fetch=True)
        return [ColumnInfo(str(r[1]), str(r[2])) for r in rows] or None

    def create_index_sql(self, dataset: str, spec: Any) -> list[str]:
        return []  # no indexes: index names would need the same prefixing as tables

    def dlt_destination(self, target: ConnectionTarget) -> Any:
        """dlt loads the same file through its sqlalchemy destination (``dlt[sqlalchemy]``)."""
        import dlt

        return dlt.destinations.sqlalchemy(credentials=f"sqlite:///{database_path(target)}")


def _bind(value: Any) -> Any:
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value.astimezone(UTC).strftime(_UTC_TEXT)
    return value


def _read(value: Any) -> Any:
    if isinstance(value, str) and _UTC_TEXT_RE.fullmatch(value):
        return datetime.strptime(value[:-6], _UTC_TEXT[:-6]).replace(tzinfo=UTC)
    return value
