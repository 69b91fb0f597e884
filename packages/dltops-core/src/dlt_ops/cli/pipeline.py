"""The ``dlt-ops pipeline`` command group. Each command lives in its own module and is attached
here; other modules (run, status, ...) add theirs with ``pipeline_app.command(...)``."""

from __future__ import annotations

import typer

from dlt_ops.cli.pipeline_list import list_sources, show_resources
from dlt_ops.cli.validate import validate

pipeline_app = typer.Typer(
    no_args_is_help=True, help="Discover, validate and run the project's sources."
)
pipeline_app.command("list")(list_sources)
pipeline_app.command("resources")(show_resources)
pipeline_app.command("validate")(validate)

# the runner's commands (imported here so `pipeline --help` lists them; services load lazily)
from dlt_ops.cli.run import run  # noqa: E402
from dlt_ops.cli.status import status  # noqa: E402

pipeline_app.command("run")(run)
pipeline_app.command("status")(status)
from dlt_ops.cli.pipeline_backfill import backfill  # noqa: E402

pipeline_app.command("backfill")(backfill)
