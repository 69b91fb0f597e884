"""Helpers for resources typed by a Pydantic model (0.1's public helpers, kept)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def extract_model_column_names(model: Any) -> set[str]:
    """Every key a raw record may carry for one of ``model``'s fields: field names and their
    string aliases (``alias``, ``validation_alias``)."""
    from dlt_ops.reconcile.declared import field_keys

    out: set[str] = set()
    for name, info in model.model_fields.items():
        out |= field_keys(name, info)
    return out


def drop_unknown_nulls(model: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A ``resource.add_map`` step that drops ``None`` values under keys the model does not
    know: dlt would otherwise create an untyped column from the first null, which a frozen
    data-type contract then refuses once a real value arrives."""
    known = extract_model_column_names(model)

    def drop(record: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in record.items() if v is not None or k in known}

    return drop
