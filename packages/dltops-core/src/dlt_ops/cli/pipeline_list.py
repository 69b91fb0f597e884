"""``dlt-ops pipeline list`` and ``pipeline resources``.

Phase 1 (the import-free scan) for sources whose resources are written as ``@dlt.resource``;
sources that build their resources at run time (dlt's ``sql_database``, ``rest_api``,
``filesystem``) are listed from the Phase-2 facts cache, or one sandboxed look that fills it
(:mod:`dlt_ops.project.runtime_resources`). ``--static`` never imports anything.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from dlt_ops.cli.state import AppState, RootOption

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig
    from dlt_ops.project import Project, SourceInfo
    from dlt_ops.project.runtime_resources import ResourceListing

_FOOTNOTE = (
    "Resource counts are a static, import-free estimate: a resource shared under a pipeline's "
    "resource/ counts toward every source of that pipeline; validate and run resolve the "
    "actual per-source list."
)
_RUNTIME_NOTE = (
    "* discovered at run time: the source builds these resources when it runs (e.g. dlt's "
    "sql_database, rest_api, filesystem); listed from a sandboxed import, cached in "
    ".dlt-ops/validate-facts.json."
)
RUNTIME_MARK = "(discovered at run time)"

StaticOption = Annotated[
    bool,
    typer.Option(
        "--static",
        help="Import-free scan only: sources that build their resources at run time show none.",
    ),
]


def _discover(ctx: typer.Context, root: Path | None) -> tuple[ProjectConfig, Project]:
    from dlt_ops.project import discover

    state = ctx.obj if isinstance(ctx.obj, AppState) else AppState()
    config = state.with_root(root).project()
    return config, discover(config.root)


RefreshOption = Annotated[
    bool,
    typer.Option(
        "--refresh",
        help="Look again live at sources that build their resources at run time (the "
        "cached list may predate a table added to the database), and update the cache.",
    ),
]


def _listings(
    config: ProjectConfig,
    project: Project,
    names: list[str] | None,
    static: bool,
    *,
    refresh: bool = False,
    live_reflected: bool = False,
) -> dict[str, ResourceListing]:
    from dlt_ops.errors import UsageError
    from dlt_ops.project.runtime_resources import ResourceListing, resource_listings

    if static and refresh:
        raise UsageError("--static imports nothing and --refresh looks live: pick one.")
    if static:
        chosen = names if names is not None else list(project.sources)
        return {n: ResourceListing(project.sources[n].static_resources) for n in chosen}
    return resource_listings(project, config, names, refresh=refresh, live_reflected=live_reflected)


def source_json(
    config: ProjectConfig, info: SourceInfo, listing: ResourceListing | None = None
) -> dict[str, Any]:
    """The JSON shape of one source in ``list --json``."""
    cfg = config.source(info.name)
    names = listing.names if listing is not None else info.static_resources
    runtime = sorted(listing.runtime) if listing is not None else []
    return {
        "name": info.name,
        "pipeline": info.pipeline,
        "function": info.function_name,
        "config_section": info.config_section,
        "module": info.module_path.relative_to(config.root).as_posix(),
        "schedule": cfg.schedule if cfg.schedule_valid else None,
        "airflow_var": cfg.airflow_var,
        "resources": list(names),
        "runtime_resources": runtime,
        "resources_error": listing.error if listing is not None else None,
    }


def list_sources(
    ctx: typer.Context,
    schedule: Annotated[
        str | None,
        typer.Option("--schedule", "-s", help="Only sources with this schedule, e.g. @daily."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array on stdout.")] = False,
    static: StaticOption = False,
    refresh: RefreshOption = False,
    root: RootOption = None,
) -> None:
    """List the project's sources (static scan; sources that build their resources at run
    time are imported in the sandbox once, then answered from a cache)."""
    from dlt_ops.config import Schedule
    from dlt_ops.errors import UsageError

    valid = [s.value for s in Schedule]
    if schedule is not None and schedule not in valid:
        raise UsageError(f"invalid --schedule {schedule!r}; valid: {', '.join(valid)}.")
    config, project = _discover(ctx, root)
    infos = list(project.sources.values())
    if schedule is not None:  # the filter applies in JSON mode too (a reference bug)
        infos = [i for i in infos if _schedule(config, i) == schedule]
    listings = _listings(config, project, [i.name for i in infos], static, refresh=refresh)
    rows = [source_json(config, info, listings[info.name]) for info in infos]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        typer.echo("No sources found")
        return
    typer.echo(f"Found {len(rows)} source(s)\n")
    from dlt_ops.tables import Column, Table, echo

    table = Table((Column("Name", 30), Column("Pipeline", 15), Column("Schedule", 10),
                   Column("Resources")))  # fmt: skip
    for r in rows:
        count = f"{len(r['resources'])}{'*' if r['runtime_resources'] else ''}"
        if r["resources_error"]:
            count += " (run-time look failed: see `pipeline resources`)"
        table.add(r["name"], r["pipeline"], r["schedule"] or "-", count)
    head, *body = table.lines()
    echo([head, "-" * 70, *body])
    typer.echo(f"\n{_FOOTNOTE}")
    if any(r["runtime_resources"] for r in rows):
        typer.echo(_RUNTIME_NOTE)


def _schedule(config: ProjectConfig, info: SourceInfo) -> str | None:
    cfg = config.source(info.name)
    return cfg.schedule if cfg.schedule_valid else None


def _pick_source(project: Project) -> str:
    names = list(project.sources)
    if not names:
        from dlt_ops.errors import UsageError

        raise UsageError("the project has no sources; nothing to show.")
    for i, name in enumerate(names, 1):
        typer.echo(f"  {i}. {name}")
    import click

    index = typer.prompt("Enter number", default=1, type=click.IntRange(1, len(names)))
    return names[index - 1]


def show_resources(
    ctx: typer.Context,
    source: Annotated[str | None, typer.Option("--source", "-s", help="Source name.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array on stdout.")] = False,
    static: StaticOption = False,
    refresh: RefreshOption = False,
    root: RootOption = None,
) -> None:
    """Show one source's resources (static scan; a source that builds its resources at run
    time is imported in the sandbox once, then answered from a cache)."""
    from dlt_ops.errors import UnknownSourceError, UsageError

    config, project = _discover(ctx, root)
    if source is None:
        if as_json or not sys.stdin.isatty():
            raise UsageError("--source/-s is required with --json or without a terminal.")
        source = _pick_source(project)
    try:
        info = project.source(source)
    except UnknownSourceError as exc:
        if as_json:
            typer.echo(json.dumps({"error": str(exc), "available_sources": list(exc.known)}))
            raise typer.Exit(exc.exit_code) from None
        raise
    # a reflected database is listed live: a table added since the last look is runnable
    listing = _listings(config, project, [info.name], static, refresh=refresh, live_reflected=True)[
        info.name
    ]
    if as_json:
        typer.echo(json.dumps(list(listing.names), indent=2))
        return
    row = source_json(config, info, listing)
    typer.echo(f"Source: {info.name}")
    typer.echo(f"Pipeline: {info.pipeline}")
    typer.echo(f"Module: {row['module']}")
    typer.echo(f"Function: {info.function_name}")
    typer.echo(f"Config: [sources.{info.config_section}]")
    typer.echo(f"Schedule: {row['schedule'] or '-'}")
    if row["airflow_var"]:
        typer.echo(f"Airflow Variable: {row['airflow_var']}")
    typer.echo(f"\nResources ({len(listing.names)}):")
    for name in listing.names:
        typer.echo(f"  • {name} {RUNTIME_MARK}" if name in listing.runtime else f"  • {name}")
    if listing.error:
        typer.echo(
            f"\nThe source builds its resources at run time, but importing and calling it "
            f"failed: {listing.error}. `dlt-ops pipeline validate` shows details."
        )
