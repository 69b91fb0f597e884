"""``dlt-ops pipeline reconcile``."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from dlt_ops.cli.state import AppState, RootOption

if TYPE_CHECKING:
    from dlt_ops.reconcile.service import ReconcileResult


class FailOn(StrEnum):
    """What ``--fail-on`` turns into exit 1."""

    drift = "drift"


def render_text(result: ReconcileResult) -> str:
    """One block per source: its findings (new ones marked), notes and error."""
    out: list[str] = []
    if result.dry_run:
        out.append("Dry run: no alert sent, no drift state written.")
    for report in result.reports:
        out.append(f"Source: {report.source}  |  Findings: {len(report.findings)}  |  "
                   f"Duration: {report.duration_s:.2f}s")  # fmt: skip
        if report.error:
            out.append(f"  ✗ {report.error}")
        elif not report.findings:
            out.append("  ✓ No drift")
        for f in report.findings:
            mark = "new" if f.new else ("acknowledged" if f.acknowledged_at else "seen")
            first = f.first_seen_at.isoformat(timespec="seconds") if f.first_seen_at else "-"
            out.append(f"  • {f.table}.{f.column}: {f.kind} drift, {f.detail} [{mark}, first "
                       f"seen {first}]")  # fmt: skip
            if f.reproduce_sql:
                out.append(f"      {f.reproduce_sql}")
        out += [f"  ! {note}" for note in report.notes]
        out.append("")
    if result.alerts_sent:
        out.append(f"Alerts sent: {result.alerts_sent}")
    return "\n".join(out).rstrip("\n")


def reconcile(
    ctx: typer.Context,
    source: Annotated[
        list[str] | None,
        typer.Option("--source", "-s", help="Source to reconcile (repeatable)."),
    ] = None,
    all_sources: Annotated[bool, typer.Option("--all", help="Reconcile every source.")] = False,
    include_removal: Annotated[
        bool,
        typer.Option(
            "--include-removal",
            help="Also flag declared columns whose non-null share collapsed recently "
            "(needs [dlt_ops] load_timestamp_column).",
        ),
    ] = False,
    dataset: Annotated[
        str | None, typer.Option("--dataset", "-d", help="Dataset, overriding the config.")
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Report only: send no alert and write no drift state."),
    ] = False,
    ack: Annotated[
        bool,
        typer.Option("--ack", help="Acknowledge every drift found (--fail-on ignores it then)."),
    ] = False,
    fail_on: Annotated[
        FailOn | None,
        typer.Option("--fail-on", help="Exit 1 when unacknowledged drift is found."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON document on stdout.")
    ] = False,
    root: RootOption = None,
) -> None:
    """Report schema drift between the destination and the resources' Pydantic models."""
    from dlt_ops.errors import UsageError
    from dlt_ops.reconcile.service import ReconcileRequest
    from dlt_ops.reconcile.service import reconcile as run_reconcile

    if bool(source) == all_sources:
        raise UsageError("pass either -s/--source (repeatable) or --all.")
    if ack and dry_run:
        raise UsageError("--ack writes the drift state; it cannot be combined with --dry-run.")
    state: AppState = ctx.obj.with_root(root)
    config = state.project()
    request = ReconcileRequest(
        sources=tuple(dict.fromkeys(source or ())),
        all_sources=all_sources,
        dataset=dataset,
        include_removal=include_removal,
        dry_run=dry_run,
        ack=ack,
    )
    from dlt_ops.cli.spinner import spinner

    with spinner("Reconciling", enabled=sys.stderr.isatty() and not as_json) as step:
        result = run_reconcile(state.registry(), config, request, on_progress=step)
    if as_json:
        typer.echo(json.dumps(result.as_json(), indent=2, default=str))
    else:
        typer.echo(render_text(result))
    if result.failed:
        raise typer.Exit(1)
    if fail_on == FailOn.drift and result.open_findings:
        if not as_json:
            typer.echo(f"{len(result.open_findings)} unacknowledged drift finding(s): "
                       "failing (--fail-on drift).", err=True)  # fmt: skip
        raise typer.Exit(1)
