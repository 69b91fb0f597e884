"""``dlt-ops init [ROOT] [-p NAME] [--example | --source sql_database|rest_api|filesystem]
[--schema S] [--table T ...] [--backend B] [--destination NAME]``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def init(
    root: Annotated[
        Path,
        typer.Argument(
            help="Directory to scaffold (created if missing).", file_okay=False, metavar="ROOT"
        ),
    ] = Path("."),
    pipeline: Annotated[
        str,
        typer.Option("--pipeline", "-p", help="Name of the starter pipeline directory."),
    ] = "my_pipeline",
    example: Annotated[
        bool,
        typer.Option("--example", help="Add the runnable, network-free demo_events source."),
    ] = False,
    source: Annotated[
        str | None,
        typer.Option(
            "--source",
            help="Build the project around one of dlt's sources: sql_database, rest_api or "
            "filesystem.",
        ),
    ] = None,
    schema: Annotated[
        str | None,
        typer.Option(
            "--schema",
            help="With --source sql_database: the database schema to load (default: the "
            "database's default schema).",
        ),
    ] = None,
    table: Annotated[
        list[str] | None,
        typer.Option(
            "--table",
            help="With --source sql_database: a table to load (repeatable); '*' loads every "
            "table of the schema (default: a placeholder 'orders').",
        ),
    ] = None,
    backend: Annotated[
        str | None,
        typer.Option(
            "--backend",
            help="With --source sql_database: sqlalchemy (default), pyarrow, pandas or connectorx.",
        ),
    ] = None,
    destination: Annotated[
        str | None,
        typer.Option(
            "--destination",
            "-d",
            help="The project's default_destination (dlt's engine name); its adapter's files "
            "go into .gitignore. Default: the first installed adapter that keeps its database "
            "in the project.",
        ),
    ] = None,
) -> None:
    """Scaffold a dlt-ops project; refuses to overwrite an existing one."""
    from dlt_ops.project.scaffold import EXAMPLE_SOURCE, SqlOptions, init_project

    sql = None
    if schema is not None or table or backend is not None:
        sql = SqlOptions(schema, tuple(table or ()), backend or "sqlalchemy")
    result = init_project(
        root, pipeline, example=example, source=source, sql=sql, destination=destination
    )
    typer.echo(f"\n✓ Initialized dlt-ops project at {result.root}\n")
    for rel in result.created:
        typer.echo(f"  {rel}")
    starter = result.starter
    if starter is not None and starter.core_tier:
        typer.echo(
            f"\nNote: no dlt-ops adapter for {starter.destination!r} is installed, so the project "
            f"runs at core tier (runs and assertions work; features that need an adapter refuse). "
            f"Install its adapter package (e.g. dltops-{starter.destination}) for the full tier; "
            f"see docs/destinations.md."
        )
    typer.echo("\nNext steps:")
    kind = result.dlt_source
    if kind is not None:
        typer.echo(f"  1. Install: {kind.install}")
        typer.echo(f"  2. Fill in {kind.fill_in}")
        typer.echo("  3. Validate the project: dlt-ops pipeline validate")
        typer.echo(f"  4. Run it: dlt-ops pipeline run -s {kind.source} -y")
        return
    if example:  # the README's order: validate, then run
        typer.echo("  1. Validate the project: dlt-ops pipeline validate")
        typer.echo(f"  2. Try the example: dlt-ops pipeline run -s {EXAMPLE_SOURCE} -y")
        return
    typer.echo(
        f"  1. Write a source: {pipeline}/source/<name>.py "
        f"(module name = [sources.<name>] in .dlt/config.toml)"
    )
    typer.echo("  2. Validate the project: dlt-ops pipeline validate")
