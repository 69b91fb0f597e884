"""Typed vocabulary of the adapter contract: capabilities, tables, columns, connection targets."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from dlt_ops.errors import IdentifierError

#: The identifier grammar every adapter enforces (an adapter may tighten it, never loosen it).
IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_identifier(ident: object, *, max_length: int = 63, subject: str = "identifier") -> str:
    """Return ``ident`` if it matches the identifier grammar, else raise ``IdentifierError``."""
    if not isinstance(ident, str) or not IDENTIFIER_RE.fullmatch(ident):
        shown = repr(ident) if len(repr(ident)) <= 80 else repr(ident)[:77] + "..."
        raise IdentifierError(
            f"{subject} {shown} is not a valid SQL name: use letters, digits and underscores, "
            f"starting with a letter or underscore."
        )
    if len(ident) > max_length:
        raise IdentifierError(
            f"{subject} '{ident[:40]}...' is {len(ident)} characters long; "
            f"this destination allows at most {max_length}."
        )
    return ident


class ColumnType(StrEnum):
    """Canonical column types; each adapter maps them to its engine's names."""

    TEXT = "text"
    BIGINT = "bigint"
    DOUBLE = "double"
    BOOLEAN = "boolean"
    TIMESTAMPTZ = "timestamptz"


@dataclass(frozen=True)
class Column:
    """One column of a state table."""

    name: str
    type: ColumnType
    nullable: bool = True


@dataclass(frozen=True)
class TableSpec:
    """A state table as core code declares it; adapters render the DDL."""

    name: str
    columns: tuple[Column, ...]
    unique: tuple[str, ...] = ()
    #: Column groups worth an index for reads; rendered only where ``capabilities.indexes``.
    indexes: tuple[tuple[str, ...], ...] = ()
    #: The table gains columns across versions: ``ensure_table`` adds the ones an existing
    #: table lacks (always nullable, as its old rows have no value for them).
    evolving: bool = False


@dataclass(frozen=True)
class ColumnInfo:
    """A column as the destination reports it (``data_type`` is the engine's own type name)."""

    name: str
    data_type: str


@dataclass(frozen=True)
class Capabilities:
    """What an adapter's engine can do, declared once (never probed at runtime).

    ``create_schema``: the adapter creates datasets/schemas (else ``ensure_dataset`` is a no-op).
    ``if_exists_ddl``: ``CREATE/DROP TABLE IF [NOT] EXISTS`` is native (else the base class
    looks the table up first and emits the plain statement).
    ``unique_constraints``: the engine enforces ``UNIQUE`` (some warehouses only declare it).
    ``transactions``: ``adapter.transaction(client)`` gives atomic multi-statement work.
    ``nested_transactions``: a ``transaction()`` opened inside another one joins it (or is a
    savepoint); when ``False`` the inner one raises ``DestinationError`` instead.
    ``rowcount``: ``execute`` reports rows affected by INSERT/UPDATE/DELETE.
    ``indexes``: ``CREATE INDEX IF NOT EXISTS`` is supported and worth emitting.
    ``single_writer``: one process at a time may write the database (an embedded file engine),
    so backfill runs its chunks one after another instead of in worker processes.
    ``max_identifier_length``: longest table/column/dataset name accepted.
    """

    create_schema: bool = True
    if_exists_ddl: bool = True
    unique_constraints: bool = True
    transactions: bool = True
    nested_transactions: bool = True
    rowcount: bool = True
    indexes: bool = False
    single_writer: bool = False
    max_identifier_length: int = 63


@dataclass(frozen=True)
class ConnectionTarget:
    """Everything an adapter needs to open a native connection.

    ``credentials`` is what dlt would resolve for this destination: a connection string, a
    mapping of fields, or ``None`` for the engine's default. Relative file paths resolve
    against ``project_root``, never the current directory.
    """

    destination: str
    dataset: str
    project_root: Path
    credentials: str | dict[str, object] | None = None
    pipeline_name: str | None = None
    connect_timeout_s: float = 10.0
    #: Readers (``status``) never create anything: an absent database file reads as empty.
    read_only: bool = False
    options: dict[str, object] = field(default_factory=dict)
