"""BigQuery's side of statement rendering: typed parameters and string literals.

BigQuery binds positional ``?`` parameters only with an explicit type, chosen here from the
Python value. ``None`` has no type of its own, and a typed NULL (say ``STRING``) cannot be
assigned to an ``INT64`` column, so a ``None`` parameter renders as the keyword ``NULL`` (untyped,
coerced to whatever the context needs) and is not sent as a parameter. The keyword is a
constant of the grammar, never data, so this keeps the "values are bound, not formatted" rule.

Canonical string literals double a quote (``'it''s'``); BigQuery escapes with backslashes and
would read a lone backslash as an escape, so literals are re-escaped for BigQuery.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from dlt_ops.errors import StatementError

_SCALAR_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "BOOL"),  # before int: bool is an int subclass
    (int, "INT64"),
    (float, "FLOAT64"),
    (str, "STRING"),
    (bytes, "BYTES"),
    (Decimal, "NUMERIC"),
    (dt.datetime, "TIMESTAMP"),  # before date: datetime is a date subclass
    (dt.date, "DATE"),
    (dt.time, "TIME"),
)


def bigquery_type(value: object) -> str:
    """The BigQuery type a non-null Python value binds as."""
    for py_type, bq_type in _SCALAR_TYPES:
        if isinstance(value, py_type):
            return bq_type
    raise StatementError(
        f"cannot bind a {type(value).__name__} as a BigQuery parameter; pass str, int, float, "
        f"bool, bytes, Decimal, datetime, date, time, a list of one of those, or None."
    )


def bind(value: object) -> Any:
    """A typed ``ScalarQueryParameter`` (or ``ArrayQueryParameter`` for lists/tuples)."""
    from google.cloud.bigquery import ArrayQueryParameter, ScalarQueryParameter

    if isinstance(value, list | tuple):
        items = [v for v in value if v is not None]
        if len(items) != len(value):
            raise StatementError("BigQuery arrays cannot hold NULL elements")
        element = bigquery_type(items[0]) if items else "STRING"
        if any(bigquery_type(v) != element for v in items):
            raise StatementError("a BigQuery array parameter needs elements of one type")
        return ArrayQueryParameter(None, element, list(items))
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        # BigQuery reads a zone-less TIMESTAMP as UTC; say so explicitly.
        value = value.replace(tzinfo=dt.UTC)
    # bigquery_type() has refused any value of a type BigQuery cannot bind
    return ScalarQueryParameter(None, bigquery_type(value), value)  # type: ignore[arg-type]


def bind_all(params: Sequence[object]) -> list[Any]:
    """Parameters for the ``?`` placeholders left after ``None`` became ``NULL``."""
    return [bind(p) for p in params if p is not None]


def placeholder_for(params: Sequence[object]) -> Any:
    """A ``placeholder(index)`` callable: ``?`` for values, ``NULL`` for ``None``."""
    return lambda index: "NULL" if params[index] is None else "?"


def _bigquery_literal(body: str) -> str:
    body = body.replace("''", "'")
    escaped = (
        body.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n").replace("\r", "\\r")
    )
    return f"'{escaped}'"


def escape_literals(text: str) -> str:
    """Rewrite canonical ``'...'`` literals in a text chunk into BigQuery's escaping."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        start = text.find("'", i)
        if start < 0:
            out.append(text[i:])
            break
        out.append(text[i:start])
        j = start + 1
        while True:  # the tokenizer guarantees literals are complete within one chunk
            j = text.find("'", j)
            if j + 1 < n and text[j + 1] == "'":
                j += 2
                continue
            break
        out.append(_bigquery_literal(text[start + 1 : j]))
        i = j + 1
    return "".join(out)
