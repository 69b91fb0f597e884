"""DuckDB adapter: canonical SQL is DuckDB's own dialect, so rendering is near-passthrough."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from dlt_ops.adapters import Capabilities, ConnectionTarget, SqlAdapterBase
from dlt_ops.destinations import DUCKDB_MEMORY as MEMORY
from dlt_ops.destinations import duckdb_database_path as database_path

__all__ = ["MEMORY", "DuckDBAdapter", "database_path"]


class DuckDBAdapter(SqlAdapterBase):
    """DuckDB through the ``duckdb`` Python driver."""

    name: ClassVar[str] = "duckdb"
    capabilities: ClassVar[Capabilities] = Capabilities(
        create_schema=True,
        if_exists_ddl=True,
        unique_constraints=True,
        transactions=True,
        rowcount=True,
        max_identifier_length=255,
    )

    def _open(self, target: ConnectionTarget) -> Any:
        import duckdb  # the driver loads only when a connection opens

        path = database_path(target)
        if target.read_only and (path == MEMORY or not Path(path).exists()):
            # a reader must not create the file: an absent database reads as an empty one
            return duckdb.connect(MEMORY)
        if path != MEMORY:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        if target.read_only:
            try:
                return duckdb.connect(path, read_only=True)
            except duckdb.ConnectionException:
                # this process already holds the file read-write (an in-process run)
                return duckdb.connect(path)
        return duckdb.connect(path)

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
