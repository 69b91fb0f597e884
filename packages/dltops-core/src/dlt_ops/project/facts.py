"""Phase-2 facts: what validate's rules need to know about an instantiated source.

:func:`extract` reads them once from a live ``DltSource``; they are plain, JSON-able data, so
validate caches them (:mod:`dlt_ops.project.facts_cache`) and answers the rules on the next
run without importing dlt or project code. Rules read facts, never live objects, so a cached
and a fresh answer cannot differ. Importing this module imports neither dlt nor pydantic.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_SCALARS = (str, int, float, bool, type(None))


@dataclass(frozen=True)
class ResourceFacts:
    """One resource of an instantiated source.

    ``model`` is the name of the ``columns=`` Pydantic model (``None`` without one);
    ``declared_type`` the type name of a ``columns=`` value that is not a model;
    ``model_fields`` the field names of the ``columns=`` object (assertion columns);
    ``dict_fields`` the model fields typed dict / list[dict] / Mapping; ``defaulted_fields``
    the model fields validation fills with a default when a row lacks them; ``columns`` the
    computed table schema's columns with their scalar hints (``None`` when the schema needs a
    data item to compute); ``contract_columns`` the computed ``schema_contract`` columns mode
    (when a string); ``incremental`` whether the resource has an incremental cursor;
    ``builder`` which of dlt's own sources built it (``sql_database``, ``rest_api``,
    ``filesystem``; ``None`` for hand-written resources); ``window_error`` why dlt could not
    bound its incremental to an external ``[from, to)`` window and the fix (``None`` when it
    can, or when it has no incremental).
    """

    name: str
    model: str | None = None
    declared_type: str | None = None
    model_fields: tuple[str, ...] | None = None
    dict_fields: tuple[str, ...] = ()
    defaulted_fields: tuple[str, ...] = ()
    columns: dict[str, dict[str, Any]] | None = None
    contract_columns: str | None = None
    incremental: bool = False
    builder: str | None = None
    window_error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The cacheable form."""
        out = dict(self.__dict__)
        out["model_fields"] = list(self.model_fields) if self.model_fields is not None else None
        out["dict_fields"] = list(self.dict_fields)
        out["defaulted_fields"] = list(self.defaulted_fields)
        return out

    @classmethod
    def from_json(cls, data: Any) -> ResourceFacts:
        """Rebuild from :meth:`to_json`; ``ValueError`` when the data is not that shape."""
        if not isinstance(data, dict) or set(data) != set(cls.__dataclass_fields__):
            raise ValueError("resource facts: unexpected keys")
        columns = data["columns"]
        if columns is not None and not (
            isinstance(columns, dict) and all(isinstance(c, dict) for c in columns.values())
        ):
            raise ValueError("resource facts: columns is not a table of tables")
        fields = data["model_fields"]
        return cls(
            name=_str(data["name"]),
            model=_opt_str(data["model"]),
            declared_type=_opt_str(data["declared_type"]),
            model_fields=tuple(_str(f) for f in fields) if fields is not None else None,
            dict_fields=tuple(_str(f) for f in data["dict_fields"]),
            defaulted_fields=tuple(_str(f) for f in data["defaulted_fields"]),
            columns=columns,
            contract_columns=_opt_str(data["contract_columns"]),
            incremental=bool(data["incremental"]),
            builder=_opt_str(data["builder"]),
            window_error=_opt_str(data["window_error"]),
        )


@dataclass(frozen=True)
class SourceFacts:
    """An instantiated source: its resource names (in order) and each resource's facts."""

    resource_names: tuple[str, ...]
    resources: tuple[ResourceFacts, ...]

    def declared_columns(self) -> dict[str, tuple[str, ...] | None]:
        """Resource name → field names of its ``columns=`` object (``None`` without one)."""
        return dict(zip(self.resource_names, (r.model_fields for r in self.resources), strict=True))

    def to_json(self) -> dict[str, Any]:
        """The cacheable form."""
        return {
            "resource_names": list(self.resource_names),
            "resources": [r.to_json() for r in self.resources],
        }

    @classmethod
    def from_json(cls, data: Any) -> SourceFacts:
        """Rebuild from :meth:`to_json`; ``ValueError`` when the data is not that shape."""
        if not isinstance(data, dict):
            raise ValueError("source facts: not a table")
        try:
            names, resources = data["resource_names"], data["resources"]
            if len(names) != len(resources):
                raise ValueError("source facts: one resource entry per name expected")
            return cls(
                tuple(_str(n) for n in names), tuple(ResourceFacts.from_json(r) for r in resources)
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(f"source facts: {exc}") from exc


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {type(value).__name__}")
    return value


def _opt_str(value: Any) -> str | None:
    return None if value is None else _str(value)


def dictish(annotation: Any) -> bool:
    """A model field annotation dlt would unnest: dict, Mapping, list[dict], or a union of them."""
    origin = typing.get_origin(annotation)
    if annotation is dict or origin is dict or annotation in (typing.Dict, typing.Mapping):  # noqa: UP006
        return True
    if origin in (typing.Union, types.UnionType):
        return any(dictish(a) for a in typing.get_args(annotation))
    if origin in (list, typing.List):  # noqa: UP006
        args = typing.get_args(annotation)
        return bool(args) and dictish(args[0])
    return origin is Mapping


def pydantic_model(declared: Any) -> Any:
    """``declared`` when it is a ``pydantic.BaseModel`` subclass, else ``None``."""
    try:
        from pydantic import BaseModel
    except ImportError:
        return None
    return declared if isinstance(declared, type) and issubclass(declared, BaseModel) else None


def _scalar_hints(columns: Any) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, hints in (columns or {}).items():
        if isinstance(hints, Mapping):
            out[str(name)] = {str(k): v for k, v in hints.items() if isinstance(v, _SCALARS)}
    return out


#: Module prefixes of dlt's own sources → the name users know them by.
DLT_BUILDERS = (
    ("dlt.sources.sql_database", "sql_database"),
    ("dlt.sources.rest_api", "rest_api"),
    ("dlt.sources.filesystem", "filesystem"),
)


def builder_of(resource: Any) -> str | None:
    """Which of dlt's own sources built ``resource`` (from its generator's module)."""
    while resource is not None:
        pipe = getattr(resource, "_pipe", None)
        gen = getattr(pipe, "gen", None) if pipe is not None else None
        module = getattr(gen, "__module__", None) or ""
        for prefix, name in DLT_BUILDERS:
            if module == prefix or module.startswith(prefix + "."):
                return name
        resource = getattr(resource, "_parent", None)  # a reader piped from filesystem()
    return None


def extract_resource(resource: Any) -> ResourceFacts:
    """The facts of one live ``DltResource``."""
    from dlt_ops.project.incrementals import incremental_of, window_fix, window_problem

    declared = (getattr(resource, "_hints", None) or {}).get("original_columns")
    model = pydantic_model(declared)
    fields = getattr(declared, "model_fields", None)
    try:
        schema = resource.compute_table_schema()
    except Exception:  # dynamic hints need a data item; nothing static to record
        schema = None
    contract = (schema or {}).get("schema_contract")
    mode = contract.get("columns") if isinstance(contract, dict) else contract
    found = incremental_of(resource)
    builder = builder_of(resource)
    why = window_problem(found, str(resource.name)) if found is not None else None
    return ResourceFacts(
        name=str(resource.name),
        model=model.__name__ if model is not None else None,
        declared_type=type(declared).__name__ if declared is not None and model is None else None,
        model_fields=tuple(fields) if isinstance(fields, Mapping) else None,
        dict_fields=tuple(
            n for n, info in model.model_fields.items() if dictish(info.annotation)
        ) if model is not None else (),
        defaulted_fields=tuple(
            n for n, info in model.model_fields.items() if not info.is_required()
        ) if model is not None else (),
        columns=_scalar_hints(schema.get("columns", {})) if schema is not None else None,
        contract_columns=mode if isinstance(mode, str) else None,
        incremental=found is not None,
        builder=builder,
        window_error=f"{why}. Fix: {window_fix(found, builder)}" if why else None,
    )  # fmt: skip


def extract(source: Any) -> SourceFacts:
    """The facts of a live ``DltSource`` (exceptions propagate)."""
    resources = source.resources
    return SourceFacts(
        tuple(resources.keys()), tuple(extract_resource(r) for r in resources.values())
    )
