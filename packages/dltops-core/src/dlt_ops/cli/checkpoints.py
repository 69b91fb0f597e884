"""``dlt-ops checkpoints list|cleanup``: read and prune the checkpoint table (seed 001).

Both resolve the destination through the project config (``--source NAME`` or
``--pipeline <source>_pipeline``); neither needs local dlt pipeline state. Services are imported
inside the commands so ``dlt-ops --help`` stays free of dlt and drivers.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated, Any

import typer

from dlt_ops.cli.help_format import PlainHelpGroup
from dlt_ops.cli.state import AppState, RootOption, not_a_directory
from dlt_ops.tables import Block, Column, Table, plain

checkpoints_app = typer.Typer(
    cls=PlainHelpGroup,
    no_args_is_help=True,
    help="Inspect and clean up @with_checkpoints rows in the destination.",
)

_TABLE_DEFAULT = "_dlt_custom_checkpoints"
COLUMNS = (
    Column("Resource", 20),
    Column("RunID", 10),
    Column("Checkpoint", 25),
    Column("Pages", 8),
    Column("Records", 10),
    Column("Status", 10, status=True),
    Column("Created"),
)

PipelineOpt = Annotated[
    str | None,
    typer.Option(
        "--pipeline", "-p", help="dlt pipeline name (<source>_pipeline), e.g. events_pipeline."
    ),
]
SourceOpt = Annotated[
    str | None,
    typer.Option("--source", "-s", help="dlt-ops source name; its pipeline is <source>_pipeline."),
]
TableOpt = Annotated[
    str, typer.Option("--table", "-t", help="Checkpoint table (the decorator's checkpoint_table).")
]


class OutputFormat(StrEnum):
    """``--format`` choices."""

    table = "table"
    json = "json"


def _cell(value: Any) -> str:
    return "-" if value is None else str(value)


def render_blocks(rows: list[dict[str, Any]]) -> list[Block]:
    """The seed's text layout, as blocks for the table renderer."""
    table = Table(COLUMNS)
    for r in rows:
        table.add(str(r["resource_name"])[:20], _cell(r["run_id"])[:8],
                  str(r["checkpoint_value"])[:25], _cell(r["page_number"]),
                  _cell(r["records_processed"]), r["status"], _cell(r["created_at"]))  # fmt: skip
    head, *body = table.lines()
    return [f"Found {len(rows)} checkpoint(s):", "", head, "-" * 120, *body]


def render_table(rows: list[dict[str, Any]]) -> str:
    """The seed's text layout (what a pipe gets)."""
    return plain(render_blocks(rows))


@checkpoints_app.command("list")
def list_command(
    ctx: typer.Context,
    pipeline: PipelineOpt = None,
    source: SourceOpt = None,
    resource: Annotated[
        str | None,
        typer.Option(
            "--resource", "-r", help="Only this resource's checkpoints.", callback=not_a_directory
        ),
    ] = None,
    table: TableOpt = _TABLE_DEFAULT,
    output: Annotated[
        OutputFormat, typer.Option("--format", "-f", help="table (default) or json.")
    ] = OutputFormat.table,
    as_json: Annotated[bool, typer.Option("--json", help="Same as --format json.")] = False,
    root: RootOption = None,
) -> None:
    """List a pipeline's checkpoints, newest first (active rows are live resume state)."""
    from dlt_ops.checkpoints import list_checkpoints

    state: AppState = ctx.obj.with_root(root)
    rows = list_checkpoints(pipeline, table, source=source, resource_name=resource, root=state.root)
    if as_json or output == OutputFormat.json:
        typer.echo(json.dumps(rows, indent=2, default=str))
    elif not rows:
        typer.echo("No checkpoints found")
    else:
        from dlt_ops.tables import echo

        echo(render_blocks(rows))


@checkpoints_app.command("cleanup")
def cleanup_command(
    ctx: typer.Context,
    pipeline: PipelineOpt = None,
    source: SourceOpt = None,
    resource: Annotated[
        str | None,
        typer.Option(
            "--resource", "-r", help="Only this resource's rows.", callback=not_a_directory
        ),
    ] = None,
    table: TableOpt = _TABLE_DEFAULT,
    include_active: Annotated[
        bool,
        typer.Option(
            "--include-active",
            help="Also delete active rows (live resume state): affected resources restart "
            "their window on the next run.",
        ),
    ] = False,
    root: RootOption = None,
) -> None:
    """Delete completed checkpoints (active rows survive unless --include-active)."""
    from dlt_ops.checkpoints import cleanup_checkpoints

    state: AppState = ctx.obj.with_root(root)
    result = cleanup_checkpoints(
        pipeline,
        resource,
        table,
        source=source,
        include_active=include_active,
        root=state.root,
    )
    scope = f" (resource '{resource}')" if resource else ""
    typer.echo(f"✓ Cleaned up checkpoints for pipeline '{result.pipeline_name}'{scope}")
    typer.echo(f"  deleted {result.deleted} row(s); {result.active_kept} active row(s) kept")
