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


def loads(text: bytes | str, *, plain: int) -> Any:
    """The value of the JSON document ``text``, each tagged object decoded as :func:`encode`
    wrote it; raises :class:`CacheFormatError` (a ``ValueError``) for anything else.

    Decoded in json's own parser (``object_hook`` sees each object once its members are
    built), not by a second walk over the parsed data: a fleet's cache of a thousand modules
    is read before every command. ``plain``: how many untagged objects the document's own
    frame holds (e.g. the document and its map of entries); any other untagged object must be
    a dataclass's fields.
    """
    import json

    untagged = [0, 0]  # objects without a tag seen, and those taken as a dataclass's fields

    def hook(data: dict[str, Any]) -> Any:
        if _TAG not in data:
            untagged[0] += 1
            return _Fields(data)
        return _decode_tagged(data, untagged)

    found = json.loads(text, object_hook=hook)
    if untagged[0] - untagged[1] != plain:
        raise CacheFormatError("an untagged object where a tagged value belongs")
    return found


class _Fields(dict[str, Any]):
    """An untagged JSON object: the fields of a dataclass (or the document's frame)."""


def _decode_tagged(data: dict[str, Any], untagged: list[int]) -> Any:
    if set(data) - {_TAG, "v", "cls"}:
        raise CacheFormatError("not a tagged value")
    kind, inner = data[_TAG], data.get("v")
    if kind == "path" and isinstance(inner, str):
        return Path(inner)
    if kind == "float" and inner in ("inf", "-inf", "nan"):
        return float(inner)
    if kind == "obj":
        untagged[1] += 1
        return _decode_object(data.get("cls"), inner)
    items = _items(inner)
    if kind == "tuple":
        return tuple(items)
    if kind in ("set", "frozenset"):
        try:
            return frozenset(items) if kind == "frozenset" else set(items)
        except TypeError as exc:  # an unhashable member
            raise CacheFormatError(str(exc)) from exc
    if kind == "dict":
        try:
            return dict(map(_pair, items))
        except TypeError as exc:
            raise CacheFormatError(str(exc)) from exc
    raise CacheFormatError(f"unknown tag {kind!r}")


def _items(inner: Any) -> list[Any]:
    if not isinstance(inner, list):
        raise CacheFormatError("expected a list")
    return inner


def _pair(item: Any) -> tuple[Any, Any]:
    if not isinstance(item, list) or len(item) != 2:
        raise CacheFormatError("expected a key/value pair")
    return item[0], item[1]


def _decode_object(name: Any, fields: Any) -> Any:
    if not isinstance(name, str) or name not in _CLASSES or type(fields) is not _Fields:
        raise CacheFormatError(f"unknown class {name!r}")
    if set(fields) != _FIELDS[name]:
        raise CacheFormatError(f"fields of {name} do not match")
    return _CLASSES[name](**fields)
