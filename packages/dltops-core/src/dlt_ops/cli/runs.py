"""``dlt-ops runs``: the runs ledger across sources (``prune``)."""

from __future__ import annotations

from typing import Annotated

import typer

from dlt_ops.cli.state import AppState, RootOption

runs_app = typer.Typer(no_args_is_help=True, help="Work with the runs ledger across sources.")


@runs_app.command("prune")
def prune(
    ctx: typer.Context,
    older_than: Annotated[
        str, typer.Option("--older-than", help="Delete runs started longer ago than N{d|h|m}.")
    ],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Count what would be deleted; delete nothing.")
    ] = False,
    root: RootOption = None,
) -> None:
    """Trim ledger rows older than a retention period, in every ledger the project uses."""
    from dlt_ops.ledger.prune import prune_ledgers
    from dlt_ops.ledger.writer import utcnow
    from dlt_ops.project.discovery import discover
    from dlt_ops.runner.window import parse_duration

    state: AppState = ctx.obj.with_root(root)
    config = state.project()
    age, label = parse_duration(older_than, "--older-than")
    sources = list(discover(config.root).sources)
    results = prune_ledgers(state.registry(), config, sources, utcnow() - age, dry_run=dry_run)
    verb = "would delete" if dry_run else "deleted"
    for result in results:
        if result.error:
            typer.echo(f"{result.ledger}: ! unreadable: {result.error}")
        else:
            typer.echo(f"{result.ledger}: {verb} {result.rows} run(s) older than {label}")
    if not results:
        typer.echo("No ledgers found.")
