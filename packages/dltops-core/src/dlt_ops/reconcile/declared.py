"""What a resource's Pydantic model declares, table by table, in the destination's names.

A field holding a nested model is flattened into ``field__sub`` columns; a list of models is a
child table ``<table>__field``; a field of untyped structure (``dict``, ``Any``, a list of
scalars) declares everything under its name, since the model says nothing about its inside.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass, field
from typing import Any


@dataclass
class DeclaredTable:
    """Columns a model declares for one table, with dlt's type for each where known."""

    columns: dict[str, str | None] = field(default_factory=dict)
    #: column-name prefixes declared as untyped structure (``meta__...``)
    open_prefixes: set[str] = field(default_factory=set)

    def declares(self, column: str) -> bool:
        """Whether ``column`` is declared (itself, or under an untyped prefix)."""
        return column in self.columns or any(column.startswith(p) for p in self.open_prefixes)


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """``(inner type, is_list)`` with ``Optional``/``Annotated`` peeled off."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _unwrap(members[0]) if len(members) == 1 else (annotation, False)
    if origin in (list, tuple, set, frozenset, typing.Sequence):
        args = typing.get_args(annotation)
        inner, _ = _unwrap(args[0]) if args else (Any, False)
        return inner, True
    return annotation, False


def _is_model(tp: Any) -> bool:
    from pydantic import BaseModel

    return isinstance(tp, type) and issubclass(tp, BaseModel)


def field_keys(name: str, info: Any) -> set[str]:
    """A field's name and its string aliases (data may arrive under either)."""
    out = {name}
    for alias in (getattr(info, "alias", None), getattr(info, "validation_alias", None)):
        if isinstance(alias, str):
            out.add(alias)
    return out


def _dlt_types(model: Any) -> dict[str, str]:
    """dlt's data type of each scalar field (what dlt creates the column as)."""
    from dlt.common.libs.pydantic import pydantic_to_table_schema_columns

    try:
        columns = pydantic_to_table_schema_columns(model)
    except Exception:  # a model dlt cannot map still declares its columns
        return {}
    return {n: str(c["data_type"]) for n, c in columns.items() if c.get("data_type")}


def declared_tables(model: Any, table: str, naming: Any) -> dict[str, DeclaredTable]:
    """Every table ``model`` declares, starting at ``table`` (names normalized by ``naming``)."""
    out: dict[str, DeclaredTable] = {}

    def walk(current: Any, table_name: str, prefix: str, into: DeclaredTable) -> None:
        types_of = _dlt_types(current)
        for name, info in current.model_fields.items():
            inner, is_list = _unwrap(info.annotation)
            for raw in field_keys(name, info):
                column = naming.normalize_identifier(raw)
                path = naming.make_path(prefix, column) if prefix else column
                if is_list and _is_model(inner):
                    into.columns.setdefault(path, None)  # stored whole (json) unless unnested
                    child = naming.make_path(table_name, path)
                    out[child] = DeclaredTable()
                    walk(inner, child, "", out[child])
                elif _is_model(inner):
                    into.columns.setdefault(path, None)  # may be stored whole, as json
                    walk(inner, table_name, path, into)
                else:
                    into.columns[path] = None if prefix else types_of.get(raw)
                    if is_list or inner in (dict, Any) or typing.get_origin(inner) is dict:
                        into.open_prefixes.add(path + "__")
                        open_child = naming.make_path(table_name, path)
                        out.setdefault(open_child, DeclaredTable()).open_prefixes.add("")

    out[table] = DeclaredTable()
    walk(model, table, "", out[table])
    return out


def resource_model(resource: Any) -> Any | None:
    """The Pydantic model a dlt resource validates with (``columns=Model``), if any."""
    validator = getattr(resource, "validator", None)
    model = getattr(validator, "model", None)
    return model if _is_model(model) else None
