"""``dlt-ops migrate``: adopt a dlt-ops 0.1 project (docs/migrating-from-0.1.md)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from dlt_ops.cli.state import AppState, RootOption


def migrate(
    ctx: typer.Context,
    apply: Annotated[
        bool,
        typer.Option(
            "--apply",
            help="Make the changes: rewrite 0.1's config keys (the original kept as "
            "config.toml.0.1.bak), add this version's columns to 0.1's tables, move dlt's "
            "working directories into the project.",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON document on stdout.")] = False,
    root: RootOption = None,
) -> None:
    """Read a dlt-ops 0.1 project and say what changes here; --apply adopts it in place."""
    from dlt_ops.config import find_project_root
    from dlt_ops.migrate.service import plan_migration

    state: AppState = ctx.obj.with_root(root)
    plan = plan_migration(find_project_root(state.root), apply=apply)
    if as_json:
        typer.echo(json.dumps(plan.as_json(), indent=2))
    else:
        typer.echo("\n".join(plan.lines()))
    if plan.manual:
        raise typer.Exit(1)
