"""The checkpoint table and its statements, plus cursor-value (de)serialization.

Every statement here is canonical (``dlt_ops.adapters.Statement``): values are bound, the table
is the ``{checkpoints}`` slot rendered by the adapter. The table *name* is user-configurable
(``checkpoint_table=``), so statements are built per name after ``check_identifier``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any

from dlt_ops.adapters import Column, ColumnType, Statement, TableSpec, check_identifier

DEFAULT_TABLE = "_dlt_custom_checkpoints"
ACTIVE = "active"
COMPLETED = "completed"
#: The namespace of an incremental with neither an initial nor a start value.
DEFAULT_RUN_ID = "default"

#: Column order of every SELECT and of ``CheckpointRow``.
COLUMNS = (
    "pipeline_name",
    "resource_name",
    "run_id",
    "checkpoint_value",
    "page_number",
    "records_processed",
    "status",
    "created_at",
    "updated_at",
    "ledger_run_id",
)


def table_spec(name: str) -> TableSpec:
    """The checkpoint table as core declares it (the seed's columns plus ``ledger_run_id``)."""
    text, big, ts = ColumnType.TEXT, ColumnType.BIGINT, ColumnType.TIMESTAMPTZ
    return TableSpec(
        name=check_identifier(name, subject="checkpoint_table"),
        columns=(
            Column("pipeline_name", text, nullable=False),
            Column("resource_name", text, nullable=False),
            Column("run_id", text),
            Column("checkpoint_value", text, nullable=False),
            Column("page_number", big),
            Column("records_processed", big),
            Column("status", text, nullable=False),
            Column("created_at", ts, nullable=False),
            Column("updated_at", ts, nullable=False),
            Column("ledger_run_id", text),
        ),
        indexes=(("pipeline_name", "resource_name", "status"),),
    )


@dataclass(frozen=True)
class Statements:
    """The statements for one checkpoint table name."""

    insert: Statement
    active_values: Statement
    active_values_null: Statement
    complete: Statement
    complete_null: Statement
    retention: Statement


def _run_id_cond(null: bool) -> str:
    return "run_id IS NULL" if null else "run_id = ?"


@lru_cache(maxsize=32)
def statements(name: str) -> Statements:
    """Build (once per table name) the manager's statements; validates ``name``."""
    check_identifier(name, subject="checkpoint_table")
    t = "{" + name + "}"
    scope = "pipeline_name = ? AND resource_name = ?"

    def active(null: bool) -> Statement:
        return Statement(
            f"SELECT checkpoint_value, page_number, created_at FROM {t} "
            f"WHERE {scope} AND status = ? AND {_run_id_cond(null)}"
        )

    def complete(null: bool) -> Statement:
        return Statement(
            f"UPDATE {t} SET status = ?, updated_at = ? "
            f"WHERE {scope} AND status = ? AND {_run_id_cond(null)}"
        )

    return Statements(
        insert=Statement(
            f"INSERT INTO {t} ({', '.join(COLUMNS)}) VALUES ({', '.join('?' for _ in COLUMNS)})"
        ),
        active_values=active(False),
        active_values_null=active(True),
        complete=complete(False),
        complete_null=complete(True),
        # retention is scoped to this pipeline and resource (the reference deleted everyone's)
        retention=Statement(f"DELETE FROM {t} WHERE {scope} AND status = ? AND created_at < ?"),
    )


# -- cursor values ---------------------------------------------------------------------------


def serialize_value(value: Any) -> str:
    """A cursor value as stored: ISO-8601 for datetimes and dates, ``str`` otherwise."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    return str(value)


def isolation_run_id(value: Any) -> str:
    """``sha256(<serialized initial-or-start value>)[:16]``: the checkpoint namespace."""
    return hashlib.sha256(serialize_value(value).encode("utf-8")).hexdigest()[:16]


def parse_value(text: str, like: Any = None, parser: Callable[[str], Any] | None = None) -> Any:
    """Turn a stored string back into a cursor value.

    ``parser`` (the decorator's ``value_parser``) wins. Otherwise the type of ``like`` (the
    incremental's initial or start value) decides: ints, floats, dates and datetimes parse back
    to their type. Without a hint, ISO-8601 datetimes parse and anything else stays a string.
    """
    if parser is not None:
        return parser(text)
    if isinstance(like, bool):
        return text.lower() == "true"
    if isinstance(like, int):
        return int(text)
    if isinstance(like, float):
        return float(text)
    if isinstance(like, date) and not isinstance(like, datetime):
        return date.fromisoformat(text)
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        if isinstance(like, datetime):
            raise
        return text


def apply_offset(value: Any, offset_seconds: float, *, descending: bool = False) -> Any:
    """The safety overlap for datetime cursors (toward the window start); others unchanged."""
    if not isinstance(value, datetime) or not offset_seconds:
        return value
    delta = timedelta(seconds=offset_seconds)
    return value + delta if descending else value - delta


def cursor_of(page: Any, path: str) -> Any:
    """The page's maximum cursor value at ``path`` (``None`` when the page carries none).

    Lists of dicts or objects, a single dict or object, and Arrow tables are understood;
    ``a.b`` walks nested dicts.
    """
    if page is None:
        return None
    if hasattr(page, "column_names") and hasattr(page, "column"):  # pyarrow Table/RecordBatch
        if path not in page.column_names or page.num_rows == 0:
            return None
        import pyarrow.compute as pc

        return pc.max(page.column(path)).as_py()
    if isinstance(page, dict) or not isinstance(page, list | tuple):
        return _field(page, path)
    if "." not in path and all(type(item) is dict for item in page):
        values = [v for item in page if (v := item.get(path)) is not None]
    else:
        values = [v for v in (_field(item, path) for item in page) if v is not None]
    if not values:
        return None
    try:
        return max(values)
    except TypeError:  # mixed, incomparable types: the page's last value is the best guess
        return values[-1]


def _field(item: Any, path: str) -> Any:
    for part in path.split("."):
        if item is None:
            return None
        item = item.get(part) if isinstance(item, dict) else getattr(item, part, None)
    return item


def count_records(page: Any) -> int:
    """Records in a page: its length for sized non-string pages, else 1."""
    if type(page) is list:  # the common page, once per page: skip the probing below
        return len(page)
    if hasattr(page, "num_rows"):
        return int(page.num_rows)
    if isinstance(page, str | bytes | dict) or not hasattr(page, "__len__"):
        return 1
    return len(page)
