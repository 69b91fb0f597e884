"""``dlt-ops pipeline clean``."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from dlt_ops.cli.deprecated import flag_alias
from dlt_ops.cli.state import AppState, RootOption, not_a_directory


def clean(
    ctx: typer.Context,
    source: Annotated[str, typer.Option("--source", "-s", help="Source to clean (by name).")],
    resource: Annotated[
        list[str] | None,
        typer.Option(
            "--resource",
            "-r",
            help="Clean only this resource (exact name, repeatable).",
            callback=not_a_directory,
        ),
    ] = None,
    local_only: Annotated[
        bool, typer.Option("--local-only", help="Remove only the local dlt working state.")
    ] = False,
    remote_only: Annotated[
        bool,
        typer.Option("--remote-only", help="Clean only the destination; keep local state."),
    ] = False,
    dataset: Annotated[
        str | None, typer.Option("--dataset", "-d", help="Dataset, overriding the config.")
    ] = None,
    include_ledger: Annotated[
        bool,
        typer.Option("--include-ledger", help="Also delete the source's _dlt_ops_runs history."),
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the plan and change nothing.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    auto_approve: Annotated[
        bool,
        typer.Option(
            "--auto-approve",
            hidden=True,
            callback=flag_alias("--auto-approve", "-y/--yes"),
            help="dlt-ops 0.1's spelling of --yes.",
        ),
    ] = False,
    trigger_source: Annotated[
        str,
        typer.Option("--trigger-source", help="Registered trigger emitter recorded in the ledger."),
    ] = "cli",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the plan (and the audit row) as JSON.")
    ] = False,
    root: RootOption = None,
) -> None:
    """Remove a source's data, dlt state and dlt-ops rows (plan first, audited in the ledger)."""
    from dlt_ops.clean.service import CleanRequest, execute_clean, prepare_clean
    from dlt_ops.errors import UsageError

    yes = yes or auto_approve
    state: AppState = ctx.obj.with_root(root)
    config = state.project()
    request = CleanRequest(
        source=source, resources=tuple(dict.fromkeys(resource or ())), local_only=local_only,
        remote_only=remote_only, dataset=dataset, include_ledger=include_ledger,
        trigger_source=trigger_source, dry_run=dry_run,
    )  # fmt: skip
    from dlt_ops.cli.spinner import spinner

    with spinner("Cleaning", enabled=sys.stderr.isatty() and not as_json) as step:
        step(f"planning what '{source}' left behind")
        prepared = prepare_clean(state.registry(), config, request)
    plan = prepared.plan
    if as_json and dry_run:
        typer.echo(json.dumps({"dry_run": True, "plan": plan.as_json()}, indent=2))
        return
    typer.echo("\n".join(plan.lines()), err=as_json)
    if dry_run:
        typer.echo("Dry run: nothing was changed.")
        return
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError("not a terminal: pass -y/--yes to clean without confirmation.")
        if not typer.confirm("This permanently deletes the above. Continue?", default=False):
            typer.echo("Aborted: nothing was changed.", err=True)
            raise typer.Exit(0)
    with spinner("Cleaning", enabled=sys.stderr.isatty() and not as_json) as step:
        step(f"removing what '{source}' left behind (plan above)")
        record = execute_clean(state.registry(), config, request, prepared)
    if as_json:
        typer.echo(json.dumps({"dry_run": False, "plan": plan.as_json(),
                               "audit": record.as_json()}, indent=2))  # fmt: skip
    else:
        # "Cleanup complete" is 0.1's wording, kept for scripts that look for it
        typer.echo(f"✓ Cleanup complete: '{source}' (audit row {record.run_id}): "
                   f"{record.error_summary}")  # fmt: skip
