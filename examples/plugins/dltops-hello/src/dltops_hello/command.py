"""``dlt-ops hello``."""

from __future__ import annotations

from typing import Annotated

import typer

from dlt_ops.cli.state import RootOption


def hello(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout.")] = False,
    root: RootOption = None,
) -> None:
    """Count the project's configured sources."""
    import json

    config = ctx.obj.with_root(root).project()
    names = sorted(config.sources)
    if as_json:
        typer.echo(json.dumps({"sources": names}))
    else:
        typer.echo(f"{len(names)} source(s): {', '.join(names) or '-'}")
