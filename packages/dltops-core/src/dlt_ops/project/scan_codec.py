"""A data-only JSON encoding of Phase-1 scan results, for the on-disk scan cache.

The cache lives in the project's ``.dlt-ops/`` directory, which may come from a restored CI
cache, a shared volume or a careless commit: whatever is in it must never be able to run code.
So the encoding is plain JSON, and decoding builds only the frozen dataclasses of
:mod:`dlt_ops.project.model` named in ``_CLASSES``, field by field. Anything else in the file —
an unknown tag, a missing or extra field, a wrong type — raises :class:`CacheFormatError`,
which the cache treats as a miss.

Literal values (``schema_contract=``) can be any ``ast.literal_eval`` result. Tuples, sets,
frozensets, non-string dict keys and paths are tagged so they round-trip exactly; bytes and
complex numbers are not encodable, and a module holding them is simply not cached.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

from dlt_ops.project.model import (
    CallSite,
    ColumnsRef,
    ContractDecl,
    IncrementalDecl,
    ModuleFacts,
    ResourceDef,
    SourceDecl,
)

_MODEL = (CallSite, ColumnsRef, ContractDecl, IncrementalDecl, ModuleFacts, ResourceDef, SourceDecl)
_CLASSES: dict[str, type[Any]] = {cls.__name__: cls for cls in _MODEL}
_FIELDS = {name: {f.name for f in dataclasses.fields(cls)} for name, cls in _CLASSES.items()}
_TAG = "$"  # every non-JSON value is a one-key-plus-tag object: {"$": "<kind>", "v": ...}
_MAX_DEPTH = 64


class CacheFormatError(ValueError):
    """The cached document is not one this version wrote: treat it as a cache miss."""


def encode(value: Any) -> Any:
    """``value`` as JSON-ready data; raises :class:`CacheFormatError` if it cannot be encoded."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return {_TAG: "float", "v": repr(value)}
        return value
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, tuple):
        return {_TAG: "tuple", "v": [encode(v) for v in value]}
    if isinstance(value, frozenset | set):
        kind = "frozenset" if isinstance(value, frozenset) else "set"
        return {_TAG: kind, "v": [encode(v) for v in value]}
    if isinstance(value, dict):
        return {_TAG: "dict", "v": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, Path):
        return {_TAG: "path", "v": str(value)}
    name = type(value).__name__
    if name in _CLASSES and type(value) is _CLASSES[name]:
        fields = {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {_TAG: "obj", "cls": name, "v": fields}
    raise CacheFormatError(f"cannot encode a {name}")


def decode(data: Any, depth: int = 0) -> Any:
    """The value :func:`encode` produced ``data`` from; raises :class:`CacheFormatError`."""
    if depth > _MAX_DEPTH:
        raise CacheFormatError("nested too deeply")
    if data is None or isinstance(data, bool | str | int | float):
        return data
    if isinstance(data, list):
        return [decode(v, depth + 1) for v in data]
    if not isinstance(data, dict) or set(data) - {_TAG, "v", "cls"} or _TAG not in data:
        raise CacheFormatError("not a tagged value")
    kind, inner = data[_TAG], data.get("v")
    if kind == "path" and isinstance(inner, str):
        return Path(inner)
    if kind == "float" and inner in ("inf", "-inf", "nan"):
        return float(inner)
    if not isinstance(inner, list | dict):
        raise CacheFormatError(f"bad payload for {kind!r}")
    if kind == "obj":
        return _decode_object(data.get("cls"), inner, depth)
    items = _items(inner)
    if kind == "tuple":
        return tuple(decode(v, depth + 1) for v in items)
    if kind in ("set", "frozenset"):
        members = (decode(v, depth + 1) for v in items)
        try:
            return frozenset(members) if kind == "frozenset" else set(members)
        except TypeError as exc:  # an unhashable member
            raise CacheFormatError(str(exc)) from exc
    if kind == "dict":
        try:
            return {decode(k, depth + 1): decode(v, depth + 1) for k, v in map(_pair, items)}
        except TypeError as exc:
            raise CacheFormatError(str(exc)) from exc
    raise CacheFormatError(f"unknown tag {kind!r}")


def _items(inner: list[Any] | dict[str, Any]) -> list[Any]:
    if not isinstance(inner, list):
        raise CacheFormatError("expected a list")
    return inner


def _pair(item: Any) -> tuple[Any, Any]:
    if not isinstance(item, list) or len(item) != 2:
        raise CacheFormatError("expected a key/value pair")
    return item[0], item[1]


def _decode_object(name: Any, fields: Any, depth: int) -> Any:
    if not isinstance(name, str) or name not in _CLASSES or not isinstance(fields, dict):
        raise CacheFormatError(f"unknown class {name!r}")
    if set(fields) != _FIELDS[name]:
        raise CacheFormatError(f"fields of {name} do not match")
    return _CLASSES[name](**{k: decode(v, depth + 1) for k, v in fields.items()})
