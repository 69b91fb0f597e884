"""0.1's derived-adapter calls: ``derived_adapter(engine)`` and its canonical-SQL methods.

0.1's adapters took canonical SQL text (double-quoted names, ``?`` placeholders) and a live
dlt ``sql_client``, and rewrote the text into the engine's dialect with sqlglot. This version's
adapters take typed statements instead (:mod:`dlt_ops.adapters.statements`), and a derived
adapter is switched on in config (``[dlt_ops] derived_adapters``). What 0.1 code called stays
callable here, with dlt's published facts for the engine: its sqlglot dialect, whether it
takes ``IF EXISTS`` on tables, and (from the dialect) its placeholder token.
:meth:`LegacyDerivedAdapter.adapter` is this version's adapter for the same engine.

Values always travel as bound parameters: the SQL is parsed, must be one statement with only
positional ``?`` placeholders, as many as there are parameters, and is regenerated from the
parse tree (never by string substitution). Identifiers go through the identifier grammar.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from dlt_ops.adapters.model import check_identifier
from dlt_ops.errors import DltOpsError

_DLT_PREFIX = "dlt.destinations."
#: a placeholder is usable when the dialect renders it as one token (not structure)
_TOKEN = re.compile(r"[^\s{}(),;'\"]+")
_COLUMNS_SQL = (
    "SELECT column_name, data_type FROM information_schema.columns "
    "WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position"
)


class UnderivableDestinationError(DltOpsError, LookupError):
    """dlt does not publish enough about a destination to derive an adapter for it."""

    exit_code = 2


@dataclass(frozen=True)
class DerivedCapabilities:
    """What dlt publishes about an engine, as 0.1's derived adapter used it."""

    engine: str
    dialect: str
    placeholder_style: str
    supports_if_exists: bool


def _engines() -> list[str]:
    from dlt.common.destination.reference import DestinationReference

    names = (n[len(_DLT_PREFIX):] if n.startswith(_DLT_PREFIX) else n
             for n in DestinationReference.DESTINATIONS)  # fmt: skip
    # "destination" is dlt's decorator for custom Python destinations: never SQL, and building
    # it without a callable logs a warning
    return sorted(set(names) - {"destination"})


@functools.lru_cache(maxsize=64)
def _derive(engine: str) -> DerivedCapabilities | str:
    """The engine's capabilities, or why there are none (dlt's offline description: no
    credentials, no driver)."""
    import sqlglot
    from dlt.common.destination import Destination

    try:
        destination = Destination.from_reference(engine)
        if destination is None:
            return "dlt cannot resolve it"
        caps = destination.capabilities()
    except Exception as exc:
        return f"dlt cannot resolve it ({type(exc).__name__})"
    dialect = getattr(caps, "sqlglot_dialect", None)
    if not dialect:
        return "dlt publishes no sqlglot_dialect for it"
    token = sqlglot.transpile("SELECT ?", write=dialect)[0].removeprefix("SELECT ").strip()
    if not _TOKEN.fullmatch(token):
        return f"its dialect ({dialect}) renders a placeholder as {token!r}, not a token"
    if_exists = caps.supports_create_table_if_not_exists is not False
    return DerivedCapabilities(engine, str(dialect), token, if_exists)


def derivable_destinations() -> list[str]:
    """dlt's destinations an adapter can be derived for (a diagnostic: none is switched on)."""
    return [e for e in _engines() if isinstance(_derive(e), DerivedCapabilities)]


@dataclass
class _Rows:
    """A drained cursor: 0.1's ``execute_query`` returned rows read positionally."""

    rows: list[Any]

    def fetchall(self) -> list[Any]:
        return list(self.rows)

    def fetchone(self) -> Any:
        return self.rows[0] if self.rows else None


class LegacyDerivedAdapter:
    """0.1's adapter surface for one engine, from dlt's facts (``derived_adapter`` builds it)."""

    def __init__(self, capabilities: DerivedCapabilities) -> None:
        self.capabilities = capabilities
        self.name = capabilities.engine
        self.placeholder_style = capabilities.placeholder_style
        self.supports_if_exists = capabilities.supports_if_exists
        self.timestamp_now_sql = "CURRENT_TIMESTAMP"

    def __repr__(self) -> str:
        return f"DerivedAdapter({self.name!r}, dialect={self.capabilities.dialect!r})"

    def adapter(self) -> Any:
        """This version's adapter for the engine (what ``derived_adapters`` switches on)."""
        from dlt_ops.adapters.derived import derive_adapter

        return derive_adapter(self.name)

    def timestamp_sub_days_sql(self, days: int) -> str:
        """Canonical "now minus ``days`` days"."""
        return f"{self.timestamp_now_sql} - INTERVAL '{int(days)} days'"

    def render_identifier(self, ident: str) -> str:
        """``ident`` checked against the identifier grammar, double-quoted (canonical SQL)."""
        return f'"{check_identifier(ident)}"'

    def render_table_ref(self, dataset: str, table: str) -> str:
        """``"dataset"."table"``, both checked."""
        return f"{self.render_identifier(dataset)}.{self.render_identifier(table)}"

    def native_sql(self, canonical_sql: str, n_params: int) -> str:
        """``canonical_sql`` in the engine's dialect; refused unless it is one statement with
        exactly ``n_params`` positional placeholders."""
        import sqlglot
        from sqlglot import exp

        trees = [t for t in sqlglot.parse(canonical_sql) if t is not None]
        if len(trees) != 1:
            raise ValueError(f"expected one SQL statement, got {len(trees)}")
        (tree,) = trees
        marks = list(tree.find_all(exp.Placeholder))
        if any(m.this for m in marks) or any(True for _ in tree.find_all(exp.Parameter)):
            raise ValueError("only positional ? placeholders are accepted")
        if len(marks) != n_params:
            raise ValueError(f"{len(marks)} placeholders for {n_params} parameters")
        return tree.sql(dialect=self.capabilities.dialect)

    def execute_sql(self, client: Any, canonical_sql: str, *params: Any) -> None:
        """Run canonical SQL on a live dlt ``sql_client``, its values bound."""
        client.execute_sql(self.native_sql(canonical_sql, len(params)), *params)

    def execute_query(self, client: Any, canonical_sql: str, *params: Any) -> _Rows:
        """Run a canonical query; its rows, drained."""
        with client.execute_query(self.native_sql(canonical_sql, len(params)), *params) as cur:
            return _Rows(list(cur.fetchall() or []))

    def fetch_columns(self, client: Any, dataset: str, table: str) -> list[Any] | None:
        """``(name, data_type)`` of ``table`` in order; ``None`` when it is absent."""
        from dlt_ops.adapters.model import ColumnInfo

        rows = self.execute_query(client, _COLUMNS_SQL, dataset, table).fetchall()
        return [ColumnInfo(str(r[0]), str(r[1])) for r in rows] or None

    def table_exists(self, client: Any, dataset: str, table: str) -> bool:
        return self.fetch_columns(client, dataset, table) is not None

    def drop_table_if_exists(self, client: Any, dataset: str, table: str) -> None:
        """Drop ``table``; an engine without ``DROP TABLE IF EXISTS`` is probed first."""
        ref = self.render_table_ref(dataset, table)
        if self.supports_if_exists:
            self.execute_sql(client, f"DROP TABLE IF EXISTS {ref}")
        elif self.table_exists(client, dataset, table):
            self.execute_sql(client, f"DROP TABLE {ref}")


def derived_adapter(engine: str) -> LegacyDerivedAdapter:
    """0.1's derived adapter for dlt's ``engine`` (built, not registered)."""
    derived = _derive(engine)
    if isinstance(derived, str):
        raise UnderivableDestinationError(
            f"cannot derive an adapter for {engine!r}: {derived}; it runs at the core tier. "
            f"Derivable: {', '.join(derivable_destinations())}."
        )
    return LegacyDerivedAdapter(derived)


def is_capability_derived(adapter: object) -> bool:
    """Whether ``adapter`` was derived from dlt's facts rather than written for its engine."""
    from dlt_ops.adapters.derived import DerivedAdapter

    return isinstance(adapter, LegacyDerivedAdapter | DerivedAdapter)


def register_derived_adapter(engine: str, **_: Any) -> None:
    """0.1 registered a derived adapter in the running process; here it is project config."""
    raise TypeError(
        f"register_derived_adapter is dlt-ops 0.1's; add {engine!r} to [dlt_ops] "
        f"derived_adapters in .dlt/config.toml (docs/destinations.md)"
    )
