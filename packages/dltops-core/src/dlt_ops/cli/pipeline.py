"""The ``dlt-ops pipeline`` command group. Each command lives in its own module, imported only
when that command runs; the group's help lists the summaries below (a test keeps them equal to
the commands' own help)."""

from __future__ import annotations

import typer

from dlt_ops.cli.lazy import Entry, lazy_group

COMMANDS = (
    Entry(
        "list",
        "dlt_ops.cli.pipeline_list:list_sources",
        "List the project's sources (static scan; sources that build their resources at run\n"
        "time are imported in the sandbox once, then answered from a cache).",
    ),
    Entry(
        "resources",
        "dlt_ops.cli.pipeline_list:show_resources",
        "Show one source's resources (static scan; a source that builds its resources at run\n"
        "time is imported in the sandbox once, then answered from a cache).",
    ),
    Entry(
        "validate",
        "dlt_ops.cli.validate:validate",
        "Check the project against the rule catalog. Exit 0 clean or warnings only, 1 errors.",
    ),
    Entry(
        "run",
        "dlt_ops.cli.run:run",
        "Run one source: ledger row, preflight, extract, normalize, load.",
    ),
    Entry(
        "status",
        "dlt_ops.cli.status:status",
        "Show each source's newest runs from the runs ledger (read-only, never imports sources).",
    ),
    Entry(
        "backfill",
        "dlt_ops.cli.pipeline_backfill:backfill",
        "Backfill SOURCE over [--from, --to) in --chunk pieces; resumable and safe to run twice.",
    ),
    Entry(
        "reconcile",
        "dlt_ops.cli.reconcile:reconcile",
        "Report schema drift between the destination and the resources' Pydantic models.",
    ),
    Entry(
        "clean",
        "dlt_ops.cli.clean:clean",
        "Remove a source's data, dlt state and dlt-ops rows (plan first, audited in the ledger).",
    ),
)

pipeline_app = typer.Typer(
    cls=lazy_group(*COMMANDS),
    no_args_is_help=True,
    help="Discover, validate and run the project's sources.",
)
