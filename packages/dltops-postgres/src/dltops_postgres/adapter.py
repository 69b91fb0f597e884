"""PostgreSQL adapter over psycopg 3: canonical statements render with ``%s`` placeholders.

One autocommit connection serves a whole command; ``transaction()`` opens a real transaction
(a savepoint when nested). The session time zone is UTC unless the credentials say otherwise,
so ``TIMESTAMPTZ`` values come back as aware datetimes.

``CREATE ... IF NOT EXISTS`` is not safe against itself in PostgreSQL: two sessions creating
the same schema or table at once both pass the existence check and one fails on a catalog
unique index. Concurrent backfill workers do exactly that, so each DDL call runs in a short
transaction holding an advisory lock keyed by the dataset.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

from dlt_ops.adapters import (
    Capabilities,
    Column,
    ColumnType,
    ConnectionTarget,
    SqlAdapterBase,
    TableSpec,
)
from dlt_ops.errors import DestinationError, DestinationUnreachableError, DltOpsError
from dlt_ops.log import get_logger
from dlt_ops.redact import redact
from dltops_postgres.credentials import describe, dlt_credentials, libpq_params

#: libpq errors that name a wrong setting (an invalid option value, TLS negotiation or
#: certificates) rather than a server that cannot be reached
_SETTINGS_PROBLEM = re.compile(r"invalid \w+ value|\bSSL\b|certificate|sslmode", re.IGNORECASE)

log = get_logger(__name__)


class PostgresAdapter(SqlAdapterBase):
    """PostgreSQL through psycopg 3 (imported only when a connection opens)."""

    name: ClassVar[str] = "postgres"
    #: the driver a worker process would import on its first connection (see the protocol)
    preload_modules: ClassVar[tuple[str, ...]] = ("psycopg",)
    capabilities: ClassVar[Capabilities] = Capabilities(
        create_schema=True,
        if_exists_ddl=True,
        unique_constraints=True,
        transactions=True,
        rowcount=True,
        indexes=True,
        max_identifier_length=63,  # NAMEDATALEN - 1: longer names would be truncated silently
    )
    placeholder_style: ClassVar[str] = "format"
    type_names: ClassVar[Mapping[ColumnType, str]] = {
        ColumnType.TEXT: "TEXT",
        ColumnType.BIGINT: "BIGINT",
        ColumnType.DOUBLE: "DOUBLE PRECISION",
        ColumnType.BOOLEAN: "BOOLEAN",
        ColumnType.TIMESTAMPTZ: "TIMESTAMPTZ",
    }

    def dlt_destination(self, target: ConnectionTarget) -> Any:
        """dlt's postgres destination with the credentials this adapter connects with: dlt
        would look them up again from the current directory, and refuses a credentials table
        in ``config.toml`` even when the password comes from the environment."""
        if target.credentials is None:
            return None  # nothing found: dlt resolves (and reports) them itself
        from dlt_ops.adapters.dlt_credentials import explicit_destination

        return explicit_destination(self.name, dlt_credentials(target.credentials))

    # -- driver calls -----------------------------------------------------------------------

    def _open(self, target: ConnectionTarget) -> Any:
        params = libpq_params(target.credentials, target.connect_timeout_s)
        where = describe(params)
        import psycopg  # the driver loads only when a connection opens

        log.debug("postgres.connect", target=where, timeout_s=params["connect_timeout"])
        try:
            return psycopg.connect(autocommit=True, **params)
        except psycopg.ProgrammingError as exc:  # e.g. an unknown libpq option
            raise DestinationError(
                f"could not connect to {where}: {redact(str(exc).strip())}. "
                f"Fix [destination.postgres.credentials]."
            ) from exc
        except psycopg.OperationalError as exc:
            detail = redact(" ".join(str(exc).split()))
            if _SETTINGS_PROBLEM.search(detail):  # not an outage: the settings are wrong
                raise DestinationError(
                    f"postgres connection to {where} failed on its TLS/connection settings: "
                    f"{detail}. Check sslmode (disable, allow, prefer, require, verify-ca, "
                    f"verify-full), sslrootcert/sslcert/sslkey and the server's TLS setup."
                ) from exc
            if "FATAL:" in detail:  # the server answered and refused (auth, unknown database)
                raise DestinationError(
                    f"postgres at {where} refused the connection: {detail}. "
                    f"Check username, password and database."
                ) from exc
            raise DestinationUnreachableError(
                f"could not reach postgres at {params.get('host') or 'localhost'}:"
                f"{params['port']} ({where}) within {params['connect_timeout']} s: {detail}. "
                f"Check that the server runs and that host, port and network access are right."
            ) from exc

    def _run(self, client: Any, sql: str, params: Sequence[Any], *, fetch: bool) -> Any:
        # Always pass a sequence (even empty) so psycopg turns the escaped ``%%`` back into ``%``.
        cursor = client.execute(sql, tuple(params))
        if fetch:
            return cursor.fetchall()
        return cursor.rowcount

    def _close(self, client: Any) -> None:
        client.close()

    # -- transactions -----------------------------------------------------------------------

    @contextmanager
    def transaction(self, client: Any) -> Iterator[None]:
        """A real transaction on the autocommit connection (a savepoint when nested)."""
        import psycopg

        try:
            with client.transaction():
                yield
        except DltOpsError:
            raise
        except psycopg.Error as exc:  # BEGIN/COMMIT itself failed (e.g. serialization)
            raise self._wrap(exc, "postgres transaction failed") from exc

    # -- DDL, serialized per dataset ------------------------------------------------------------

    @contextmanager
    def _ddl_lock(self, client: Any, dataset: str) -> Iterator[None]:
        self.quote_identifier(dataset)  # reject a bad name before opening a transaction
        digest = hashlib.blake2b(f"dlt_ops.ddl:{dataset}".encode(), digest_size=8).digest()
        key = int.from_bytes(digest, "big", signed=True)
        with self.transaction(client):
            try:
                self._run(client, "SELECT pg_advisory_xact_lock(%s)", (key,), fetch=True)
            except Exception as exc:
                raise self._wrap(exc, f"could not lock dataset {dataset} for DDL") from exc
            yield

    def ensure_dataset(self, client: Any, dataset: str) -> None:
        """``CREATE SCHEMA IF NOT EXISTS``, safe when several workers race to it."""
        with self._ddl_lock(client, dataset):
            super().ensure_dataset(client, dataset)

    def create_table(self, client: Any, dataset: str, spec: TableSpec) -> None:
        """``CREATE TABLE IF NOT EXISTS``, safe when several workers race to it."""
        with self._ddl_lock(client, dataset):
            super().create_table(client, dataset, spec)

    def add_columns(self, client: Any, dataset: str, table: str, columns: Sequence[Column]) -> None:
        """``ALTER TABLE ... ADD COLUMN``, serialized like creation."""
        with self._ddl_lock(client, dataset):
            super().add_columns(client, dataset, table, columns)

    def drop_table(self, client: Any, dataset: str, table: str) -> None:
        """``DROP TABLE IF EXISTS`` (idempotent, serialized like creation)."""
        with self._ddl_lock(client, dataset):
            super().drop_table(client, dataset, table)
