"""The ``owner`` key: ``[sources.<X>.dlt_ops] owner = "<team>"``."""

from __future__ import annotations

from dlt_ops.plugin_api import ConfigKey

KEY = ConfigKey(
    "owner",
    scope="source",
    expected="a team name (a non-empty string)",
    check=lambda value: isinstance(value, str) and bool(value.strip()),
    doc="who answers for the source",
)
