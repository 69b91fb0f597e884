"""``dlt-ops pipeline validate`` (placeholder until the rule engine lands)."""

from __future__ import annotations

import typer


def validate(ctx: typer.Context) -> None:
    """Validate the project."""
