"""DuckDB adapter: canonical SQL is DuckDB's own dialect, so rendering is near-passthrough."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from dlt_ops.adapters import Capabilities, ConnectionTarget, SqlAdapterBase

MEMORY = ":memory:"


def database_path(target: ConnectionTarget) -> str:
    """The DuckDB file dlt would use, resolved against the project root (never the cwd).

    Accepts dlt's forms: a path, ``duckdb:///path``, a ``{"database": path}`` mapping, or
    nothing (dlt's default ``<pipeline_name>.duckdb``).
    """
    creds = target.credentials
    if isinstance(creds, dict):
        creds = creds.get("database")
    if isinstance(creds, str) and creds.startswith("duckdb:///"):
        creds = creds[len("duckdb:///") :]
    if creds is None or creds == "":
        name = target.pipeline_name or target.dataset
        creds = f"{name}.duckdb"
    creds = str(creds)
    if creds == MEMORY or creds.startswith(":memory:"):
        return MEMORY
    path = Path(creds).expanduser()
    if not path.is_absolute():
        path = target.project_root / path
    return str(path)


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
        if path != MEMORY:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
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
