"""Canonical statements: core code writes each state-table statement once, adapters render it.

A canonical statement is SQL text in a small, engine-neutral form:

* ``?`` is a positional bound parameter (never format values into the text);
* ``{name}`` is a table in the session's dataset, rendered qualified and quoted by the adapter;
* ``"name"`` is a quoted identifier (for reserved words), requoted in the engine's style;
* ``'...'`` is a string literal and passes through untouched.

Rendering checks every identifier against the grammar and the placeholder count against the
parameters *before* anything reaches the driver.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from dlt_ops.errors import StatementError

_DML = frozenset({"INSERT", "UPDATE", "DELETE", "MERGE"})


@dataclass(frozen=True)
class _Part:
    kind: str  # "text" | "param" | "ident" | "table"
    value: str = ""


# readers build the same statement text again per ledger file (a column list each): parse once
@lru_cache(maxsize=1024)
def _tokenize(text: str) -> tuple[_Part, ...]:
    parts: list[_Part] = []
    buf: list[str] = []
    i, n = 0, len(text)

    def flush() -> None:
        if buf:
            parts.append(_Part("text", "".join(buf)))
            buf.clear()

    while i < n:
        ch = text[i]
        if ch == "'":  # string literal: copy through, '' is an escaped quote
            j = i + 1
            while True:
                j = text.find("'", j)
                if j < 0:
                    raise StatementError(f"unterminated string literal in: {text!r}")
                if j + 1 < n and text[j + 1] == "'":
                    j += 2
                    continue
                break
            buf.append(text[i : j + 1])
            i = j + 1
        elif ch == '"':
            j = text.find('"', i + 1)
            if j < 0:
                raise StatementError(f"unterminated quoted identifier in: {text!r}")
            flush()
            parts.append(_Part("ident", text[i + 1 : j]))
            i = j + 1
        elif ch == "{":
            j = text.find("}", i + 1)
            if j < 0:
                raise StatementError(f"unterminated table slot in: {text!r}")
            flush()
            parts.append(_Part("table", text[i + 1 : j]))
            i = j + 1
        elif ch == "?":
            flush()
            parts.append(_Part("param"))
            i += 1
        elif ch in "`;" or text.startswith("--", i) or text.startswith("/*", i):
            raise StatementError(
                f"canonical statements are single statements without comments or backticks: "
                f"{text!r}"
            )
        else:
            buf.append(ch)
            i += 1
    flush()
    return tuple(parts)


@dataclass(frozen=True)
class Statement:
    """One canonical SQL statement (parsed once, rendered per adapter)."""

    text: str
    parts: tuple[_Part, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "parts", _tokenize(self.text))

    @property
    def param_count(self) -> int:
        """Number of ``?`` placeholders."""
        return sum(1 for p in self.parts if p.kind == "param")

    @property
    def is_dml(self) -> bool:
        """Whether this statement modifies rows (so rows affected is meaningful)."""
        words = self.text.lstrip().split(None, 1)
        return bool(words) and words[0].upper() in _DML

    def render(
        self,
        *,
        quote: Callable[[str], str],
        table: Callable[[str], str],
        placeholder: Callable[[int], str],
        escape_text: Callable[[str], str] = lambda s: s,
        n_params: int | None = None,
    ) -> str:
        """Render for one engine; raise ``StatementError`` on a parameter-count mismatch."""
        if n_params is not None and n_params != self.param_count:
            raise StatementError(
                f"statement expects {self.param_count} parameter(s), got {n_params}: {self.text!r}"
            )
        out: list[str] = []
        index = 0
        for part in self.parts:
            if part.kind == "text":
                out.append(escape_text(part.value))
            elif part.kind == "param":
                out.append(placeholder(index))
                index += 1
            elif part.kind == "ident":
                out.append(quote(part.value))
            else:
                out.append(table(part.value))
        return "".join(out)


def sql(text: str) -> Statement:
    """Shorthand for ``Statement(text)``."""
    return Statement(text)


@lru_cache(maxsize=64)
def insert_values(table: str, columns: tuple[str, ...], n_rows: int) -> Statement:
    """``INSERT INTO {table} (columns) VALUES (...), ...`` for ``n_rows`` rows of bound values
    (parsed once per shape: a batch size recurs)."""
    row = "(" + ", ".join("?" for _ in columns) + ")"
    names = ", ".join(f'"{c}"' for c in columns)
    return Statement(f"INSERT INTO {{{table}}} ({names}) VALUES {', '.join([row] * n_rows)}")


def flatten(rows: Sequence[Sequence[object]]) -> list[object]:
    """Row values in row order, as :func:`insert_values` binds them."""
    return [value for row in rows for value in row]
