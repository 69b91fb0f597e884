"""The not_negative assertion type: ``not_negative = ["amount"]`` fails rows where a
listed column is a negative number."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dlt_ops.plugin_api import AssertionContext


class NotNegative:
    """Row-scoped: each row is judged on its own (so failing rows can be quarantined)."""

    name = "not_negative"
    row_scoped = True

    def check_config(self, params: Mapping[str, Any], ctx: AssertionContext) -> list[str]:
        columns = params.get("value")
        if not (isinstance(columns, list) and columns and all(isinstance(c, str) for c in columns)):
            return [f'a list of column names, e.g. not_negative = ["amount"], got {columns!r}']
        if ctx.declared_columns is not None:
            missing = [c for c in columns if c not in ctx.declared_columns]
            if missing:
                return [f"not_negative names columns the model lacks: {', '.join(missing)}"]
        return []

    def start(self, params: Mapping[str, Any]) -> None:
        return None

    def observe(self, state: None, row: Mapping[str, Any], params: Mapping[str, Any]) -> str | None:
        values = {c: row.get(c) for c in params["value"]}
        negative = [c for c, v in values.items() if isinstance(v, (int, float)) and v < 0]
        return f"negative {', '.join(negative)}" if negative else None

    def finalize(self, state: None, params: Mapping[str, Any]) -> str | None:
        return None
