"""The top-level typer app and its global options."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dlt_ops import __version__
from dlt_ops.cli.backfill import backfill_app
from dlt_ops.cli.checkpoints import checkpoints_app
from dlt_ops.cli.init import init
from dlt_ops.cli.pipeline import pipeline_app
from dlt_ops.cli.plugins import plugins_app
from dlt_ops.cli.runs import runs_app
from dlt_ops.cli.state import AppState

app = typer.Typer(
    name="dlt-ops",
    no_args_is_help=True,
    help="Operations layer for dlt pipelines: runs ledger, checkpoints, backfill, assertions.",
    pretty_exceptions_enable=False,
    add_completion=True,
)
app.add_typer(plugins_app, name="plugins")
app.add_typer(pipeline_app, name="pipeline")
app.add_typer(runs_app, name="runs")
app.add_typer(checkpoints_app, name="checkpoints")
app.add_typer(backfill_app, name="backfill")
app.command("init")(init)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"dlt-ops {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
    root: Annotated[
        Path | None,
        typer.Option(
            "--root", "-r", help="Project root (default: nearest parent with .dlt/config.toml)."
        ),
    ] = None,
    log_format: Annotated[
        str,
        typer.Option(
            "--log-format",
            help="Log rendering on stderr: auto (console on a TTY, else JSON), console, json.",
        ),
    ] = "auto",
    debug: Annotated[
        bool, typer.Option("--debug", help="Debug logging and tracebacks for expected errors.")
    ] = False,
) -> None:
    """Operations layer for dlt pipelines."""
    from dlt_ops.errors import UsageError
    from dlt_ops.log import LogFormat, configure_logging

    try:
        fmt = LogFormat(log_format)
    except ValueError:
        raise UsageError(
            f"--log-format {log_format!r} is not one of: auto, console, json."
        ) from None
    configure_logging(fmt, debug=debug)
    ctx.obj = AppState(root=root, debug=debug)
