"""DuckDB adapter: canonical SQL is DuckDB's own dialect, so rendering is near-passthrough."""

from __future__ import annotations

import functools
import hashlib
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from dlt_ops.adapters import (
    Capabilities,
    ColumnInfo,
    ConnectionTarget,
    SqlAdapterBase,
    Statement,
    TableSpec,
)

__all__ = ["MEMORY", "DuckDBAdapter", "database_path"]

MEMORY = ":memory:"
#: a file modified more recently than this gets no content stamp: a later write could land in
#: the same timestamp tick and leave size and mtime as they were (any later write moves the
#: mtime past a quiet one; a tool restoring an mtime changes the ctime, which is stamped too)
QUIET_S = 2.0


def database_path(target: ConnectionTarget) -> str:
    """The DuckDB file dlt would use, resolved against the project root (never the cwd).

    Accepts dlt's forms: a path, ``duckdb:///path``, a ``{"database": path}`` mapping, or
    nothing (dlt's default ``<pipeline_name>.duckdb``). The adapter reads this file and pins
    dlt's destination to it (``dlt_destination``), so both always agree.
    """
    creds = target.credentials
    if isinstance(creds, dict):
        creds = creds.get("database")  # type: ignore[assignment]
    if isinstance(creds, str) and creds.startswith("duckdb:///"):
        creds = creds[len("duckdb:///") :]
    if creds is None or creds == "":
        creds = f"{target.pipeline_name or target.dataset}.duckdb"
    creds = str(creds)
    if creds.startswith("~"):  # follows $HOME: not kept
        return _file_of.__wrapped__(creds, target.project_root)
    return _file_of(creds, target.project_root)


@functools.lru_cache(maxsize=4096)
def _file_of(creds: str, root: Path) -> str:
    """:func:`database_path` of a path-like ``creds`` (kept: a fleet reader asks per source
    per pass, and each answer costs a few ``pathlib`` parses)."""
    if creds.startswith(MEMORY):
        return MEMORY
    path = Path(creds).expanduser()
    return str(path if path.is_absolute() else root / path)


# DuckDB's own catalog function answers as information_schema.columns does (same names and type
# spellings) in half the time, which status pays once per source; every attached catalog is
# listed, so scope it to the connection's own one
_COLUMNS = Statement(
    "SELECT column_name, data_type FROM duckdb_columns() "
    "WHERE database_name = current_database() AND schema_name = ? AND table_name = ? "
    "ORDER BY column_index"
)


@functools.lru_cache(maxsize=32)
def _unnest_insert(table: str, columns: tuple[str, ...]) -> Statement:
    """``INSERT ... SELECT unnest(?), ...``: one bound list per column, zipped back into rows."""
    names = ", ".join(f'"{c}"' for c in columns)
    lists = ", ".join("unnest(?)" for _ in columns)
    return Statement(f"INSERT INTO {{{table}}} ({names}) SELECT {lists}")


class _AbsentDatabase:
    """Stands in for a database file that does not exist: every query finds nothing."""

    def execute(self, sql: str, params: Any = None) -> Any:
        if sql.lstrip().upper().startswith("SELECT"):
            return self
        raise ValueError("the database file does not exist (opened read-only)")

    def fetchall(self) -> list[tuple[Any, ...]]:
        return []

    def close(self) -> None:
        pass


class _ReaderClient:
    """A cursor on the shared reader instance; closing it detaches the file when unused."""

    def __init__(self, readers: _Readers, alias: str, cursor: Any) -> None:
        self._readers, self._alias, self._cursor = readers, alias, cursor

    def execute(self, sql: str, params: Any = None) -> Any:
        return self._cursor.execute(sql, params) if params else self._cursor.execute(sql)

    def close(self) -> None:
        self._cursor.close()
        self._readers.release(self._alias)


class _Readers:
    """One in-memory DuckDB instance per process that ATTACHes database files read-only.

    Opening a file with ``duckdb.connect`` builds a whole database instance (tens of ms);
    attaching it to a shared instance costs about a millisecond, which is what lets
    ``status`` read fifty per-source ledgers quickly. A file is detached when its last reader
    closes, so the same process can open it for writing afterwards.
    """

    def __init__(self) -> None:
        self._instance: Any = None
        self._users: dict[str, int] = {}
        self._lock = threading.Lock()

    def cursor(self, path: str) -> _ReaderClient:
        import duckdb

        alias = "dltops_" + hashlib.sha1(path.encode()).hexdigest()[:16]
        with self._lock:
            if self._instance is None:
                self._instance = duckdb.connect(MEMORY)
            if alias not in self._users:
                literal = path.replace("'", "''")  # a file path, not a value we can bind
                self._instance.execute(f"ATTACH '{literal}' AS {alias} (READ_ONLY)")
                self._users[alias] = 0
            self._users[alias] += 1
            cursor = self._instance.cursor()
        cursor.execute(f"USE {alias}")
        return _ReaderClient(self, alias, cursor)

    def release(self, alias: str) -> None:
        with self._lock:
            self._users[alias] -= 1
            if self._users[alias] == 0:
                del self._users[alias]
                self._instance.execute(f"DETACH {alias}")


_READERS = _Readers()


class DuckDBAdapter(SqlAdapterBase):
    """DuckDB through the ``duckdb`` Python driver."""

    name: ClassVar[str] = "duckdb"
    #: the driver a worker process would import on its first connection (see the protocol)
    preload_modules: ClassVar[tuple[str, ...]] = ("duckdb",)
    capabilities: ClassVar[Capabilities] = Capabilities(
        create_schema=True,
        if_exists_ddl=True,
        unique_constraints=True,
        transactions=True,
        rowcount=True,
        single_writer=True,  # one process at a time may open the file for writing
        max_identifier_length=255,
    )

    #: the database file and its write-ahead log live in the project (``init`` ignores them)
    project_files: tuple[str, ...] = ("*.duckdb", "*.duckdb.wal")

    def dlt_destination(self, target: ConnectionTarget) -> Any:
        """dlt's DuckDB destination pinned to the project-relative file this adapter reads."""
        import dlt

        return dlt.destinations.duckdb(credentials=database_path(target))

    def database_identity(self, target: ConnectionTarget) -> str:
        """The database file's absolute path (``:memory:`` for memory)."""
        return database_path(target)

    def content_stamp(self, target: ConnectionTarget) -> str | None:
        """The database file's and its write-ahead log's identity, size, mtime and ctime;
        ``None`` for memory, an absent file, or one modified in the last :data:`QUIET_S`."""
        path = database_path(target)
        if path == MEMORY:
            return None
        now, parts = time.time(), []
        for name in (path, f"{path}.wal"):
            try:
                st = os.stat(name)
            except FileNotFoundError:
                if name == path:
                    return None  # an absent database reads as empty without the driver anyway
                parts.append("-")
                continue
            except OSError:
                return None
            if now - st.st_mtime < QUIET_S:
                return None
            parts.append(f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}")
        return "|".join(parts)

    def _open(self, target: ConnectionTarget) -> Any:
        path = database_path(target)
        if target.read_only and (path == MEMORY or not Path(path).exists()):
            # a reader must not create the file: an absent database reads as an empty one,
            # answered without even loading the driver
            return _AbsentDatabase()
        import duckdb  # the driver loads only when a connection opens

        if path != MEMORY:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        if target.read_only:
            try:
                return _READERS.cursor(path)
            except duckdb.Error:
                # this process already holds the file read-write (an in-process run)
                return duckdb.connect(path)
        return duckdb.connect(path)

    def insert_rows(
        self, client: Any, dataset: str, spec: TableSpec, rows: Sequence[Sequence[Any]]
    ) -> int:
        """One list per column instead of one parameter per value: DuckDB's binding and
        planning grow with the parameter count, so 100 checkpoint rows of 10 columns cost
        ~16 ms of CPU as a ``VALUES`` list and ~4 ms as ten lists."""
        if not rows:
            return 0
        stmt = _unnest_insert(spec.name, tuple(c.name for c in spec.columns))
        columns = [list(column) for column in zip(*rows, strict=True)]  # a short row raises
        return self.execute(client, dataset, stmt, columns)

    def fetch_columns(self, client: Any, dataset: str, table: str) -> list[ColumnInfo] | None:
        """Columns from this connection's own catalog; ``None`` when the table is absent."""
        rows = self.query(client, dataset, _COLUMNS, (dataset, table))
        return [ColumnInfo(str(n), str(t)) for n, t in rows] or None

    def _run(self, client: Any, sql: str, params: Sequence[Any], *, fetch: bool) -> Any:
        result = client.execute(sql, list(params)) if params else client.execute(sql)
        rows = result.fetchall()
        if fetch:
            return rows
        # DuckDB answers DML with a one-row, one-column count.
        if rows and len(rows[0]) == 1 and isinstance(rows[0][0], int):
            return rows[0][0]
        return 0

    def _close(self, client: Any) -> None:
        client.close()
