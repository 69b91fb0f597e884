"""``SqlAdapterBase``: the public base the first-party adapters share (covered by the kit).

A subclass declares its engine facts (quote character, placeholder style, type names,
capabilities) and implements three driver calls: ``_open``, ``_run`` and ``_close``. Everything
else, rendering included, lives here once. It subclasses the ``DestinationAdapter`` protocol, so
the protocol's optional members arrive with their defaults.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

from dlt_ops.adapters.model import (
    Capabilities,
    Column,
    ColumnInfo,
    ColumnType,
    ConnectionTarget,
    TableSpec,
    check_identifier,
)
from dlt_ops.adapters.protocol import DestinationAdapter
from dlt_ops.adapters.statements import Statement
from dlt_ops.errors import DestinationError, DltOpsError
from dlt_ops.log import get_logger
from dlt_ops.redact import redact

log = get_logger(__name__)

_COLUMNS = Statement(
    "SELECT column_name, data_type FROM information_schema.columns "
    "WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position"
)


#: Open ``transaction()`` blocks per live client (``id``), so an inner block joins the outer one.
_DEPTH: dict[int, int] = {}
_DEPTH_LOCK = threading.Lock()


class SqlAdapterBase(DestinationAdapter):
    """Shared rendering and DDL for SQL engines; subclasses supply the driver calls."""

    name: ClassVar[str]
    capabilities: ClassVar[Capabilities] = Capabilities()
    quote_char: ClassVar[str] = '"'
    #: ``"qmark"`` renders ``?``; ``"format"`` renders ``%s`` and escapes literal ``%``.
    placeholder_style: ClassVar[str] = "qmark"
    type_names: ClassVar[Mapping[ColumnType, str]] = {
        ColumnType.TEXT: "VARCHAR",
        ColumnType.BIGINT: "BIGINT",
        ColumnType.DOUBLE: "DOUBLE PRECISION",
        ColumnType.BOOLEAN: "BOOLEAN",
        ColumnType.TIMESTAMPTZ: "TIMESTAMP WITH TIME ZONE",
    }

    # -- driver calls (subclasses implement) ------------------------------------------------

    def _open(self, target: ConnectionTarget) -> Any:
        raise NotImplementedError

    def _run(self, client: Any, sql: str, params: Sequence[Any], *, fetch: bool) -> Any:
        """Execute natively; return rows (``fetch``) or rows affected."""
        raise NotImplementedError

    def _close(self, client: Any) -> None:
        raise NotImplementedError

    # -- rendering ----------------------------------------------------------------------------

    def quote_identifier(self, ident: str) -> str:
        """Validate against the grammar and quote."""
        check_identifier(ident, max_length=self.capabilities.max_identifier_length)
        q = self.quote_char
        return f"{q}{ident}{q}"

    def table_ref(self, dataset: str, table: str) -> str:
        """``"dataset"."table"``, both parts validated."""
        return f"{self.quote_identifier(dataset)}.{self.quote_identifier(table)}"

    def _placeholder(self, index: int) -> str:
        return "%s" if self.placeholder_style == "format" else "?"

    def _escape_text(self, text: str) -> str:
        return text.replace("%", "%%") if self.placeholder_style == "format" else text

    def render(self, stmt: Statement, dataset: str, n_params: int | None = None) -> str:
        """Render a canonical statement for this engine."""
        return stmt.render(
            quote=self.quote_identifier,
            table=lambda t: self.table_ref(dataset, t),
            placeholder=self._placeholder,
            escape_text=self._escape_text,
            n_params=n_params,
        )

    # -- execution ----------------------------------------------------------------------------

    def connect(self, target: ConnectionTarget) -> Any:
        """Open a native connection; driver errors become ``DestinationError``."""
        try:
            return self._open(target)
        except DltOpsError:
            raise
        except Exception as exc:
            raise self._wrap(exc, f"could not connect to {self.name}") from exc

    def close(self, client: Any) -> None:
        """Close ``client``, ignoring errors from an already-broken connection."""
        try:
            self._close(client)
        except Exception:  # closing is cleanup; a dead socket must not mask the real error
            pass

    def _wrap(self, exc: BaseException, what: str) -> DestinationError:
        return DestinationError(f"{what}: {redact(f'{type(exc).__name__}: {exc}')}")

    def _dispatch(
        self, client: Any, dataset: str, stmt: Statement, params: Sequence[Any], *, fetch: bool
    ) -> Any:
        sql = self.render(stmt, dataset, n_params=len(params))
        try:
            return self._run(client, sql, tuple(params), fetch=fetch)
        except DltOpsError:
            raise
        except Exception as exc:
            raise self._wrap(exc, f"{self.name} statement failed") from exc

    def execute(
        self, client: Any, dataset: str, stmt: Statement, params: Sequence[Any] = ()
    ) -> int:
        """Run ``stmt`` with bound ``params``; rows affected for DML, 0 otherwise."""
        affected = self._dispatch(client, dataset, stmt, params, fetch=False)
        return int(affected) if stmt.is_dml and affected is not None else 0

    def query(
        self, client: Any, dataset: str, stmt: Statement, params: Sequence[Any] = ()
    ) -> list[tuple[Any, ...]]:
        """Run a query; all rows as tuples."""
        return [tuple(r) for r in self._dispatch(client, dataset, stmt, params, fetch=True)]

    def _begin(self, client: Any) -> None:
        self._run(client, "BEGIN", (), fetch=False)

    def _commit(self, client: Any) -> None:
        self._run(client, "COMMIT", (), fetch=False)

    def _rollback(self, client: Any) -> None:
        self._run(client, "ROLLBACK", (), fetch=False)

    @contextmanager
    def transaction(self, client: Any) -> Iterator[None]:
        """BEGIN ... COMMIT, ROLLBACK on error; a block opened inside another one joins it."""
        key = id(client)
        with _DEPTH_LOCK:
            depth = _DEPTH.get(key, 0)
            _DEPTH[key] = depth + 1
        try:
            if depth:  # the outer block owns BEGIN/COMMIT: the inner work shares its fate
                yield
                return
            try:
                self._begin(client)
            except Exception as exc:
                raise self._wrap(exc, f"{self.name} could not begin a transaction") from exc
            try:
                yield
            except BaseException:
                try:
                    self._rollback(client)
                except Exception as exc:  # keep the original error; the engine may have rolled back
                    log.warning("adapter.rollback_failed", error=type(exc).__name__)
                raise
            try:
                self._commit(client)
            except Exception as exc:
                raise self._wrap(exc, f"{self.name} could not commit the transaction") from exc
        finally:
            with _DEPTH_LOCK:
                if _DEPTH[key] <= 1:
                    del _DEPTH[key]
                else:
                    _DEPTH[key] -= 1

    # -- DDL ----------------------------------------------------------------------------------

    def ensure_dataset(self, client: Any, dataset: str) -> None:
        """``CREATE SCHEMA IF NOT EXISTS`` where the adapter may create schemas."""
        if self.capabilities.create_schema:
            q = self.quote_identifier(dataset)
            self.execute(client, dataset, Statement(f"CREATE SCHEMA IF NOT EXISTS {q}"))

    def create_table_sql(self, dataset: str, spec: TableSpec) -> str:
        """The native ``CREATE TABLE [IF NOT EXISTS]`` for ``spec`` (per ``if_exists_ddl``)."""
        cols = [
            f"{self.quote_identifier(c.name)} {self.type_names[c.type]}"
            + ("" if c.nullable else " NOT NULL")
            for c in spec.columns
        ]
        if spec.unique and self.capabilities.unique_constraints:
            cols.append(f"UNIQUE ({', '.join(self.quote_identifier(u) for u in spec.unique)})")
        guard = "IF NOT EXISTS " if self.capabilities.if_exists_ddl else ""
        return f"CREATE TABLE {guard}{self.table_ref(dataset, spec.name)} ({', '.join(cols)})"

    def create_index_sql(self, dataset: str, spec: TableSpec) -> list[str]:
        """``CREATE INDEX IF NOT EXISTS`` for each of ``spec.indexes``."""
        out = []
        for columns in spec.indexes:
            name = self.quote_identifier(f"{spec.name}_{'_'.join(columns)}_idx"[:63])
            cols = ", ".join(self.quote_identifier(c) for c in columns)
            table = self.table_ref(dataset, spec.name)
            out.append(f"CREATE INDEX IF NOT EXISTS {name} ON {table} ({cols})")
        return out

    def create_table(self, client: Any, dataset: str, spec: TableSpec) -> None:
        """Create ``spec`` if absent (idempotent)."""
        if not self.capabilities.if_exists_ddl and self.fetch_columns(client, dataset, spec.name):
            return  # no native IF NOT EXISTS: look first
        statements = [self.create_table_sql(dataset, spec)]
        if self.capabilities.indexes:
            statements += self.create_index_sql(dataset, spec)
        try:
            for sql in statements:
                self._run(client, sql, (), fetch=False)
        except Exception as exc:
            raise self._wrap(exc, f"could not create table {spec.name}") from exc

    def add_columns(self, client: Any, dataset: str, table: str, columns: Sequence[Column]) -> None:
        """``ALTER TABLE ... ADD COLUMN`` for each of ``columns`` (nullable: existing rows have
        no value); a column another process added meanwhile is not an error."""
        ref = self.table_ref(dataset, table)
        for column in columns:
            name = self.quote_identifier(column.name)
            sql = f"ALTER TABLE {ref} ADD COLUMN {name} {self.type_names[column.type]}"
            try:
                self._run(client, sql, (), fetch=False)
            except Exception as exc:
                present = {c.name.lower() for c in self.fetch_columns(client, dataset, table) or ()}
                if column.name.lower() not in present:
                    raise self._wrap(exc, f"could not add column {column.name} to {table}") from exc

    def evolve_table(self, client: Any, dataset: str, spec: TableSpec) -> list[str]:
        """Create ``spec`` when absent, else add the columns an older version's table lacks;
        the names added (one catalog read when the table is current)."""
        present = self.fetch_columns(client, dataset, spec.name)
        if present is None:
            self.create_table(client, dataset, spec)
            return []
        have = {c.name.lower() for c in present}
        missing = [c for c in spec.columns if c.name.lower() not in have]
        if missing:
            self.add_columns(client, dataset, spec.name, missing)
        return [c.name for c in missing]

    def drop_table(self, client: Any, dataset: str, table: str) -> None:
        """``DROP TABLE IF EXISTS`` (idempotent; looked up first without ``if_exists_ddl``)."""
        ref = self.table_ref(dataset, table)
        guard = "IF EXISTS " if self.capabilities.if_exists_ddl else ""
        if not guard and self.fetch_columns(client, dataset, table) is None:
            return
        try:
            self._run(client, f"DROP TABLE {guard}{ref}", (), fetch=False)
        except Exception as exc:
            raise self._wrap(exc, f"could not drop table {table}") from exc

    def fetch_columns(self, client: Any, dataset: str, table: str) -> list[ColumnInfo] | None:
        """Columns in order from ``information_schema``; ``None`` when the table is absent."""
        rows = self.query(client, dataset, _COLUMNS, (dataset, table))
        return [ColumnInfo(str(n), str(t)) for n, t in rows] or None
