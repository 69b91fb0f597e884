"""``dlt-ops runs``: the runs ledger across sources (``prune``)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from dlt_ops.cli.help_format import PlainHelpGroup
from dlt_ops.cli.state import AppState, RootOption
from dlt_ops.clock import utc_seconds

DatasetOption = Annotated[
    str | None,
    typer.Option("--dataset", "-d", help="Read the ledger in this dataset, overriding the config."),
]

runs_app = typer.Typer(
    cls=PlainHelpGroup, no_args_is_help=True, help="Work with the runs ledger across sources."
)


@runs_app.command("prune")
def prune(
    ctx: typer.Context,
    older_than: Annotated[
        str, typer.Option("--older-than", help="Delete runs started longer ago than N{d|h|m}.")
    ],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Count what would be deleted; delete nothing.")
    ] = False,
    dataset: DatasetOption = None,
    root: RootOption = None,
) -> None:
    """Trim ledger rows older than a retention period, in every ledger the project uses."""
    from dlt_ops.ledger.prune import prune_ledgers
    from dlt_ops.ledger.writer import utcnow
    from dlt_ops.project.discovery import discover
    from dlt_ops.runner.window import parse_duration

    state: AppState = ctx.obj.with_root(root)
    config = state.project()
    age, label = parse_duration(older_than, "--older-than")
    sources = list(discover(config.root).sources)
    results = prune_ledgers(
        state.registry(), config, sources, utcnow() - age, dry_run=dry_run, dataset=dataset
    )
    verb = "would delete" if dry_run else "deleted"
    for result in results:
        if result.error:
            typer.echo(f"{result.ledger}: ! unreadable: {result.error}", err=True)
        else:
            typer.echo(f"{result.ledger}: {verb} {result.rows} run(s) older than {label}")
    if not results:
        typer.echo("No ledgers found.")
    if any(r.error for r in results):
        raise typer.Exit(1)  # a ledger that could not be reached was not pruned


def _sources(state: AppState, source: list[str] | None) -> list[str]:
    from dlt_ops.errors import UnknownSourceError
    from dlt_ops.project.discovery import discover

    known = sorted(discover(state.project().root).sources)
    for name in source or []:
        if name not in known:
            raise UnknownSourceError(name, known)
    return list(dict.fromkeys(source)) if source else known


@runs_app.command("show")
def show(
    ctx: typer.Context,
    run: Annotated[
        str, typer.Argument(help="A run id (or its first 8+ characters), or 'last'.", metavar="RUN")
    ],
    source: Annotated[
        list[str] | None,
        typer.Option("--source", "-s", help="Look only in this source's ledger (repeatable)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON document on stdout.")] = False,
    dataset: DatasetOption = None,
    root: RootOption = None,
) -> None:
    """Show one run: its ledger row and its receipt (every record and every dollar)."""
    from dlt_ops.ledger.resumes import from_ledger
    from dlt_ops.ledger.status import shown_status, utcnow
    from dlt_ops.receipts.render import receipt_table
    from dlt_ops.receipts.service import find_run

    state: AppState = ctx.obj.with_root(root)
    report = find_run(
        state.registry(), state.project(), _sources(state, source), run, dataset=dataset
    )
    run_row, receipts = report.latest, report.latest_receipts()
    status = shown_status(run_row, utcnow(), state.project().heartbeat_seconds)
    waited = _waited(run_row)
    resumes = from_ledger(run_row.resumed_from)
    if as_json:
        doc = {
            "run": run_row.as_json(),
            "abandoned": status == "abandoned",
            "waited_s": waited,
            "attempts": len(report.attempts),
            "receipt": [r.as_json() for r in receipts],
            "resumes": [
                {**r.as_json(), "recover": r.backfill_command(run_row.source_section)}
                for r in resumes
            ],
        }
        typer.echo(json.dumps(doc, indent=2))
        return
    started = utc_seconds(run_row.started_at)
    typer.echo(
        f"run {run_row.run_id} ({run_row.source_section}) — {status}\n"
        f"  started {started} UTC, trigger {run_row.trigger_source}, "
        f"destination {run_row.destination}/{run_row.dataset}"
        + (f", backfill {run_row.backfill_id}" if run_row.backfill_id else "")
        + (f", attempt {len(report.attempts)}" if len(report.attempts) > 1 else "")
    )
    if waited is not None and run_row.queued_at is not None:
        queued = utc_seconds(run_row.queued_at)
        typer.echo(f"  queued {queued} UTC, waited {waited:.1f} s for the source's lease")
    if status == "abandoned":
        typer.echo("  ⚠ still 'running' in the ledger, but its heartbeat stopped: the process "
                   "probably died (the next run of the source closes the row)")  # fmt: skip
    if run_row.orchestrator_run_id:  # the Airflow DAG run or Dagster run behind it
        tried = "" if run_row.orchestrator_try is None else f", try {run_row.orchestrator_try}"
        typer.echo(f"  orchestrator run {run_row.orchestrator_run_id}{tried}")
    if run_row.error_summary:
        typer.echo(f"  ✗ {run_row.error_summary}")
    for resume in resumes:  # what the resume skipped, and the backfill that loads it
        typer.echo(f"  ! {resume.describe(run_row.source_section)}")
    for row in receipts:  # files a filesystem reader could not parse, skipped by on_bad_file
        for bad in json.loads(row.skipped_files or "[]"):
            line = f" (line {bad['line']})" if bad.get("line") is not None else ""
            kept = f", kept in {bad['quarantined']}" if bad.get("quarantined") else ""
            typer.echo(
                f"  ! {row.resource_name}: skipped {bad['file']}{line}{kept}: {bad['error']}"
            )
    typer.echo(receipt_table(receipts))


@runs_app.command("list")
def list_runs(
    ctx: typer.Context,
    source: Annotated[
        list[str] | None, typer.Option("--source", "-s", help="Only this source (repeatable).")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many runs.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array on stdout.")] = False,
    dataset: DatasetOption = None,
    root: RootOption = None,
) -> None:
    """Recent runs across sources, newest first (exit 1 when a ledger is unreadable)."""
    from dlt_ops.ledger.sinks import LedgerQuery
    from dlt_ops.ledger.status import collect_status, unreadable, unreadable_error

    state: AppState = ctx.obj.with_root(root)
    statuses = collect_status(
        state.registry(), state.project(), _sources(state, source), LedgerQuery("", limit=limit),
        dataset=dataset,
    )  # fmt: skip
    broken = unreadable(statuses)
    if broken and len(broken) == len(statuses):
        raise unreadable_error(broken)  # nothing readable: an outage, not an empty history
    runs = sorted((r for s in statuses for r in s.runs), key=lambda r: r.started_at,
                  reverse=True)[:limit]  # fmt: skip
    for s in broken:  # the readable ledgers are listed; the others are named, and exit 1
        typer.echo(f"! ledger of '{s.source}' unreadable: {s.error}", err=True)
    _print_runs(runs, as_json, heartbeat_s=state.project().heartbeat_seconds)
    if broken:
        raise typer.Exit(1)


def _waited(run: Any) -> float | None:  # noqa: ANN401 - a RunRecord (imported lazily)
    """Seconds a run queued for its source's lease (``None``: it did not queue)."""
    if run.queued_at is None:
        return None
    return max((run.started_at - run.queued_at).total_seconds(), 0.0)


def _print_runs(runs: list[Any], as_json: bool, *, heartbeat_s: float) -> None:
    if as_json:
        typer.echo(json.dumps([r.as_json() for r in runs], indent=2))
        return
    if not runs:
        typer.echo("No runs recorded.")
        return
    from dlt_ops.ledger.status import shown_status, utcnow
    from dlt_ops.tables import Column, Table, echo

    now = utcnow()

    table = Table((Column("Started", 20), Column("Source", 24), Column("Status", 10, status=True),
                   Column("Records", 9), Column("Trigger", 10), Column("Run ID")))  # fmt: skip
    for r in runs:
        started = utc_seconds(r.started_at)
        records = "-" if r.records_loaded is None else str(r.records_loaded)
        status = shown_status(r, now, heartbeat_s)
        table.add(started, r.source_section, status, records, r.trigger_source, r.run_id)
    echo([table])
