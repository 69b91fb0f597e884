"""The dlt schema a destination holds: which tables dlt created, and for which resource.

``reconcile`` and ``clean`` read it instead of guessing that a table is named like its
resource: ``table_name=`` hints, dynamic table names and nested child tables
(``events__payload``) all appear here with the resource that produced them. Everything goes
through the adapter's canonical SQL, so it works for a source whose code no longer exists.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from dlt_ops.adapters import DestinationSession, Statement

VERSION_TABLE = "_dlt_version"
LOADS_TABLE = "_dlt_loads"
STATE_TABLE = "_dlt_pipeline_state"
#: dlt reserves this prefix for its own tables and columns.
DLT_PREFIX = "_dlt"

_SCHEMA_NAMES = Statement(
    f"SELECT DISTINCT l.schema_name FROM {{{LOADS_TABLE}}} l JOIN {{{STATE_TABLE}}} s "
    "ON s._dlt_load_id = l.load_id WHERE s.pipeline_name = ?"
)
_NEWEST_SCHEMA = Statement(
    f'SELECT "schema" FROM {{{VERSION_TABLE}}} WHERE schema_name = ? '
    'ORDER BY inserted_at DESC, "version" DESC LIMIT 1'
)


@dataclass(frozen=True)
class StoredSchema:
    """One dlt schema as last stored in the destination."""

    name: str
    #: data table name → the resource that produced it (child tables: their root's resource)
    table_resources: dict[str, str] = field(default_factory=dict)
    #: data table name → its parent table (``None`` for a root table)
    parents: dict[str, str | None] = field(default_factory=dict)

    def tables_of(self, resource: str) -> list[str]:
        """Every data table of ``resource``, root tables before their children."""
        tables = [t for t, r in self.table_resources.items() if r == resource]
        return sorted(tables, key=lambda t: (t.count("__"), t))

    @property
    def resources(self) -> list[str]:
        """Every resource with at least one table."""
        return sorted(set(self.table_resources.values()))


def _has_table(session: DestinationSession, table: str) -> bool:
    return session.fetch_columns(table) is not None


def schema_names_of(session: DestinationSession, pipeline_name: str) -> list[str]:
    """The schema names ``pipeline_name`` stored its state under (``[]`` when it never did)."""
    if not (_has_table(session, LOADS_TABLE) and _has_table(session, STATE_TABLE)):
        return []
    return sorted(str(r[0]) for r in session.query(_SCHEMA_NAMES, pipeline_name) if r[0])


def parse_schema(name: str, document: dict[str, Any]) -> StoredSchema:
    """Map every data table of a stored schema document to its resource."""
    tables: dict[str, Any] = document.get("tables") or {}
    parents = {n: t.get("parent") for n, t in tables.items() if not n.startswith(DLT_PREFIX)}

    def root_resource(table: str) -> str | None:
        seen: set[str] = set()
        while table in tables and table not in seen:
            seen.add(table)
            found = tables[table].get("resource")
            if found:
                return str(found)
            parent = tables[table].get("parent")
            if not parent:
                return None
            table = parent
        return None

    resources = {n: r for n in parents if (r := root_resource(n)) is not None}
    return StoredSchema(name, resources, parents)


def stored_schema(session: DestinationSession, schema_name: str) -> StoredSchema | None:
    """The newest stored version of ``schema_name``; ``None`` when the destination has none."""
    if not _has_table(session, VERSION_TABLE):
        return None
    rows = session.query(_NEWEST_SCHEMA, schema_name)
    if not rows:
        return None
    return parse_schema(schema_name, json.loads(rows[0][0]))
