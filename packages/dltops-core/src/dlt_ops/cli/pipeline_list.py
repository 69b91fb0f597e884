"""``dlt-ops pipeline list`` and ``pipeline resources``: Phase 1 only, no project imports."""

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

_FOOTNOTE = (
    "Resource counts are a static, import-free estimate: a resource shared under a pipeline's "
    "resource/ counts toward every source of that pipeline; validate and run resolve the "
    "actual per-source list."
)


def _discover(ctx: typer.Context, root: Path | None) -> tuple[ProjectConfig, Project]:
    from dlt_ops.project import discover

    state = ctx.obj if isinstance(ctx.obj, AppState) else AppState()
    config = state.with_root(root).project()
    return config, discover(config.root)


def source_json(config: ProjectConfig, info: SourceInfo) -> dict[str, Any]:
    """The JSON shape of one source in ``list --json``."""
    cfg = config.source(info.name)
    return {
        "name": info.name,
        "pipeline": info.pipeline,
        "function": info.function_name,
        "config_section": info.config_section,
        "module": info.module_path.relative_to(config.root).as_posix(),
        "schedule": cfg.schedule if cfg.schedule_valid else None,
        "airflow_var": cfg.airflow_var,
        "resources": list(info.static_resources),
    }


def list_sources(
    ctx: typer.Context,
    schedule: Annotated[
        str | None,
        typer.Option("--schedule", "-s", help="Only sources with this schedule, e.g. @daily."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array on stdout.")] = False,
    root: RootOption = None,
) -> None:
    """List the project's sources (static scan; never imports project code)."""
    from dlt_ops.config import Schedule
    from dlt_ops.errors import UsageError

    valid = [s.value for s in Schedule]
    if schedule is not None and schedule not in valid:
        raise UsageError(f"invalid --schedule {schedule!r}; valid: {', '.join(valid)}.")
    config, project = _discover(ctx, root)
    rows = [source_json(config, info) for info in project.sources.values()]
    if schedule is not None:  # the filter applies in JSON mode too (a reference bug)
        rows = [r for r in rows if r["schedule"] == schedule]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        typer.echo("No sources found")
        return
    typer.echo(f"Found {len(rows)} source(s)\n")
    typer.echo(f"{'Name':<30} {'Pipeline':<15} {'Schedule':<10} Resources")
    typer.echo("-" * 70)
    for r in rows:
        typer.echo(
            f"{r['name']:<30} {r['pipeline']:<15} {r['schedule'] or '-':<10} {len(r['resources'])}"
        )
    typer.echo(f"\n{_FOOTNOTE}")


def _pick_source(project: Project) -> str:
    names = list(project.sources)
    if not names:
        from dlt_ops.errors import UsageError

        raise UsageError("the project has no sources; nothing to show.")
    for i, name in enumerate(names, 1):
        typer.echo(f"  {i}. {name}")
    index = typer.prompt("Enter number", default=1, type=typer.IntRange(1, len(names)))
    return names[index - 1]


def show_resources(
    ctx: typer.Context,
    source: Annotated[str | None, typer.Option("--source", "-s", help="Source name.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array on stdout.")] = False,
    root: RootOption = None,
) -> None:
    """Show one source's resources (static scan; never imports project code)."""
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
    if as_json:
        typer.echo(json.dumps(list(info.static_resources), indent=2))
        return
    row = source_json(config, info)
    typer.echo(f"Source: {info.name}")
    typer.echo(f"Pipeline: {info.pipeline}")
    typer.echo(f"Module: {row['module']}")
    typer.echo(f"Function: {info.function_name}")
    typer.echo(f"Config: [sources.{info.config_section}]")
    typer.echo(f"Schedule: {row['schedule'] or '-'}")
    if row["airflow_var"]:
        typer.echo(f"Airflow Variable: {row['airflow_var']}")
    typer.echo(f"\nResources ({len(info.static_resources)}):")
    for name in info.static_resources:
        typer.echo(f"  • {name}")
