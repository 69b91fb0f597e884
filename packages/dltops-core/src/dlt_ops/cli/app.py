"""The top-level typer app and its global options."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dlt_ops import __version__
from dlt_ops.cli import help_format
from dlt_ops.cli.lazy import Entry, lazy_group
from dlt_ops.cli.state import AppState

# Subcommands are imported only when they run (or their own --help is asked for); the root
# help lists these summaries, which a test keeps equal to the commands' own help.
COMMANDS = (
    Entry(
        "init",
        "dlt_ops.cli.init:init",
        "Scaffold a dlt-ops project; refuses to overwrite an existing one.",
    ),
    Entry("plugins", "dlt_ops.cli.plugins:plugins_app", "Inspect installed dlt-ops plugins."),
    Entry(
        "pipeline",
        "dlt_ops.cli.pipeline:pipeline_app",
        "Discover, validate and run the project's sources.",
    ),
    Entry("runs", "dlt_ops.cli.runs:runs_app", "Work with the runs ledger across sources."),
    Entry(
        "checkpoints",
        "dlt_ops.cli.checkpoints:checkpoints_app",
        "Inspect and clean up @with_checkpoints rows in the destination.",
    ),
    Entry("backfill", "dlt_ops.cli.backfill:backfill_app", "Inspect backfills and their chunks."),
    Entry(
        "report",
        "dlt_ops.cli.report:report",
        "Write the fleet report: one self-contained HTML file (no network, no script needed).",
    ),
    Entry(
        "metrics",
        "dlt_ops.cli.metrics:metrics",
        "Print the fleet in Prometheus text exposition format.",
    ),
    Entry(
        "migrate",
        "dlt_ops.cli.migrate:migrate",
        "Read a dlt-ops 0.1 project and say what changes here; --apply adopts it in place.",
    ),
    Entry(
        "scheduler",
        "dlt_ops.cli.scheduler:scheduler_app",
        "Run the project's schedules on this machine (y-scheduler).",
    ),
    Entry(
        "schedule",
        "dlt_ops.cli.schedule:schedule_app",
        "Write the project's schedules for cron or a CI system.",
    ),
    Entry(
        "airflow",
        "dlt_ops.cli.airflow:airflow_app",
        "Prepare an Airflow deployment for the project's DAGs.",
    ),
)

help_format.plain_metavars()  # `SOURCE`, not typer's `{source}`, in usage lines

app = typer.Typer(
    name="dlt-ops",
    cls=lazy_group(*COMMANDS, plugin_commands=True),
    no_args_is_help=True,
    help="Operations layer for dlt pipelines: runs ledger, checkpoints, backfill, assertions.",
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: see dlt_ops.cli.help_format
    add_completion=True,
)


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
        # no short flag: `-r` is --resource on every command that takes one (docs/cli.md)
        typer.Option(
            "--root", help="Project root (default: nearest parent with .dlt/config.toml)."
        ),
    ] = None,
    old_root: Annotated[
        Path | None,
        # 0.1's global `-r DIR`: unambiguous here (before the command), noted and accepted;
        # after a command `-r` is --resource
        typer.Option("-r", hidden=True, metavar="DIR", help="dlt-ops 0.1's spelling of --root."),
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
    if old_root is not None:
        from dlt_ops.cli.deprecated import note

        note(f"-r {old_root}", f"--root {old_root}")
    ctx.obj = AppState(root=root or old_root, debug=debug)
