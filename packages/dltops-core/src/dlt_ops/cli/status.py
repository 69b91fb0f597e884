"""``dlt-ops pipeline status``: the runs ledger read back, per source, newest first."""

from __future__ import annotations

import json
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from dlt_ops.cli.state import AppState, RootOption, not_a_directory
from dlt_ops.clock import utc_seconds
from dlt_ops.tables import Block, Column, Line, Table, plain

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig
    from dlt_ops.ledger.freshness import Freshness, Slots
    from dlt_ops.ledger.model import RunRecord
    from dlt_ops.ledger.status import SourceStatus
    from dlt_ops.project.model import Project

#: Seed 000's fixed columns (two-space indent, one space between).
COLUMNS = (
    Column("Status", 10, status=True),
    Column("Started", 20),
    Column("Completed", 20),
    Column("Records", 9),
    Column("Trigger", 10),
    Column("Resource", 15),
    Column("Run ID"),
)


class StatusFilter(StrEnum):
    """Run statuses ``--status`` accepts."""

    running = "running"
    completed = "completed"
    failed = "failed"


class FailOn(StrEnum):
    """What ``--fail-on`` alerts on."""

    failed = "failed"
    stale = "stale"
    unreadable = "unreadable"


def _ts(value: datetime | None) -> str:
    return utc_seconds(value) if value else "-"


def _age(delta_s: float) -> str:
    if delta_s < 60:  # "0m" read as "just now" for a row that has been silent for 50 s
        return f"{max(int(delta_s), 0)}s"
    minutes = int(delta_s // 60)
    if minutes < 60:
        return f"{minutes}m"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m" if hours < 48 else f"{hours // 24}d {hours % 24}h"


def _add_run(table: Table, run: RunRecord, abandoned: bool, now: datetime) -> None:
    status = "abandoned?" if abandoned else run.status
    records = run.records_loaded if run.records_loaded is not None else "-"
    notes: list[Line] = []
    if run.status == "failed" and run.error_summary:
        notes.append(Line((("    ", None), ("✗", "bold red"), (f" {run.error_summary}", None))))
    if abandoned:
        last = run.heartbeat_at or run.started_at
        who = f" (host {run.host}, pid {run.pid})" if run.host else ""
        notes.append(Line((("    ", None), ("⚠", "magenta"), (
            f" still 'running' but no heartbeat for {_age((now - last).total_seconds())}"
            f"{who}: the process probably died", None))))  # fmt: skip
    table.add(status, _ts(run.started_at), _ts(run.completed_at), records, run.trigger_source,
              run.resource_name or "-", run.run_id[:12], notes=notes)  # fmt: skip


#: The colour of each freshness level in a terminal.
_LEVEL_STYLE = {"ok": "green", "warn": "yellow", "error": "bold red"}


def _freshness_line(f: Freshness) -> Line:
    """``  freshness error: last success 2h 00m ago (limit 1h 00m)``."""
    level, _, rest = f.describe().partition(":")
    return Line((("  freshness ", None), (level, _LEVEL_STYLE.get(level)), (f":{rest}", None)))


def _schedule_line(slots: Slots, verdict: Freshness | None) -> Line:
    """``  schedule @hourly: last slot ..., next ... UTC; overdue: ...`` (overdue in red)."""
    text, _, overdue = slots.describe(verdict.overdue if verdict else None).partition("; ")
    if not overdue:
        return Line.of(f"  {text}")
    return Line(((f"  {text}; ", None), (overdue, "bold red" if verdict else "yellow")))


def render_blocks(
    statuses: list[SourceStatus],
    now: datetime,
    heartbeat_s: float,
    freshness: dict[str, Freshness | None] | None = None,
    slots: dict[str, Slots | None] | None = None,
) -> list[Block]:
    """Seed 000's text layout, as blocks for the table renderer; a source with a freshness
    SLA gets its verdict under its name, a scheduled one its last and next slot and whether it
    is overdue."""
    from dlt_ops.ledger.status import is_abandoned

    if not statuses:
        return ["No sources found"]
    out: list[Block] = []
    for s in statuses:
        out.append(Line.of(f"Source: {s.source}", "bold"))
        verdict = (freshness or {}).get(s.source)
        if verdict is not None and verdict.sla is not None and s.ledger in ("ok", "missing"):
            out.append(_freshness_line(verdict))
        if (where := (slots or {}).get(s.source)) is not None:
            out.append(_schedule_line(where, verdict))
        if s.ledger in ("unreadable", "unsupported"):
            state = (f"ledger {s.ledger}", "bold red")
            out.append(Line((("  ! ", None), state, (f": {s.error}", None))))
        elif not s.runs:
            out.append("  no runs recorded")
        else:
            table = Table(COLUMNS, indent="  ")
            for run in s.runs:
                _add_run(table, run, is_abandoned(run, now, heartbeat_s), now)
            out.append(table)
        if s.note:
            out.append(Line((("  ", None), ("ℹ", "cyan"), (f" {s.note}", None))))
        out.append("")
    return out[:-1]


def render_text(statuses: list[SourceStatus], now: datetime, heartbeat_s: float) -> str:
    """Seed 000's text layout (what a pipe gets)."""
    return plain(render_blocks(statuses, now, heartbeat_s))


def render_json(
    statuses: list[SourceStatus],
    now: datetime,
    heartbeat_s: float,
    freshness: dict[str, Freshness | None] | None = None,
    slots: dict[str, Slots | None] | None = None,
) -> str:
    """Seed 000's ``--json`` shape: ``[{source, ledger, error, freshness, schedule, runs}]``
    (``freshness`` is ``null`` where the ledger could not be read, ``schedule`` for a source
    without one, or ``@manual``)."""
    from dlt_ops.ledger.status import is_abandoned

    verdicts = freshness or {}
    where = slots or {}
    doc = [
        {
            "source": s.source,
            "ledger": s.ledger,
            "error": s.error,
            **({"note": s.note} if s.note else {}),
            "freshness": (f.as_json() if (f := verdicts.get(s.source)) is not None else None),
            "schedule": (
                w.as_json(f.overdue if f is not None else None)
                if (w := where.get(s.source)) is not None
                else None
            ),
            "runs": [
                {**r.as_json(), "abandoned": is_abandoned(r, now, heartbeat_s)} for r in s.runs
            ],
        }
        for s in statuses
    ]
    return json.dumps(doc, indent=2)


def _derived_notes(registry: object, config: object, sources: list[str]) -> list[str]:
    """One line per engine the selected sources reach through a derived (untested) adapter."""
    from dlt_ops.destinations import engine_name, resolve_destination
    from dlt_ops.errors import DltOpsError
    from dlt_ops.target import Tier, adapter_tier

    named = set()  # the configured engines first: usually none is derived, and then no source
    for source in sources:  # needs resolving (which checks its name and dataset)
        try:
            named.add(engine_name(config.destination_for(source)))  # type: ignore[attr-defined]
        except DltOpsError:
            continue
    if not any(adapter_tier(registry, e) is Tier.DERIVED for e in named):  # type: ignore[arg-type]
        return []
    engines = set()
    for source in sources:
        try:
            engines.add(resolve_destination(config, source).engine)  # type: ignore[arg-type]
        except DltOpsError:
            continue  # the source's own status line says what is wrong
    return [
        f"Note: destination '{engine}' uses a derived adapter (built from dlt's SQL client; "
        f"untested)"
        for engine in sorted(engines)
        if adapter_tier(registry, engine) is Tier.DERIVED  # type: ignore[arg-type]
    ]


def _check_resource(
    config: ProjectConfig, project: Project, selected: list[str], resource: str | None,
    statuses: list[SourceStatus],
) -> None:  # fmt: skip
    """``-r`` names a resource of a selected source (or one whose runs their ledgers hold): a
    filter that can match nothing is a usage error, not an empty report that ``--fail-on``
    never trips on."""
    if resource is None or any(s.runs for s in statuses):
        return
    from dlt_ops.errors import UsageError
    from dlt_ops.project.runtime_resources import resource_listings

    listings = resource_listings(project, config, selected, look=False)  # imports no source
    if any(resource in listing.names for listing in listings.values()):
        return
    known = "; ".join(
        f"{name}: {', '.join(listing.names)}" if listing.names
        else f"{name}: built at run time (`dlt-ops pipeline resources -s {name}` lists them)"
        for name, listing in listings.items()
    )  # fmt: skip
    raise UsageError(
        f"no selected source has a resource '{resource}' (-r is --resource); "
        f"known resources: {known or 'none'}."
    )


def _since(value: str | None) -> datetime | None:
    if not value:
        return None
    from dlt_ops.runner.window import parse_bound  # only when asked: it costs start-up

    return parse_bound(value, "--since")


def status(
    ctx: typer.Context,
    root: RootOption = None,
    source: Annotated[
        list[str] | None, typer.Option("--source", "-s", help="Only this source (repeatable).")
    ] = None,
    resource: Annotated[
        str | None,
        typer.Option(
            "--resource",
            "-r",
            help="Only runs scoped to this resource.",
            callback=not_a_directory,
        ),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Runs per source.")] = 10,
    status_filter: Annotated[
        StatusFilter | None, typer.Option("--status", help="Only runs with this status.")
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="Only runs started at or after (tz-aware ISO).")
    ] = None,
    fail_on: Annotated[
        FailOn | None,
        typer.Option(
            "--fail-on",
            help="Exit 1 when the newest run of a selected source failed, or is stale "
            "(misses its freshness SLA's error level; without one, overdue by its schedule; "
            "with neither, older than staleness_days; or abandoned), or its ledger is "
            "unreadable.",
        ),
    ] = None,
    dataset: Annotated[
        str | None,
        typer.Option("--dataset", "-d", help="Read the ledgers in this dataset, not the config's."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON document on stdout.")] = False,
) -> None:
    """Show each source's newest runs from the runs ledger (read-only, never imports sources)."""
    from dlt_ops.errors import UnknownSourceError
    from dlt_ops.ledger.sinks import LedgerQuery
    from dlt_ops.ledger.status import (
        collect_status,
        freshness_for,
        newest_failed,
        problems_first,
        slots_for,
        stale_by_freshness,
        unreadable,
    )
    from dlt_ops.ledger.writer import utcnow
    from dlt_ops.project.discovery import discover
    from dlt_ops.target import resolving_once

    state: AppState = ctx.obj.with_root(root)
    config = state.project()
    project = discover(config.root)
    known = sorted(project.sources)
    selected = known
    if source:
        missing = [s for s in source if s not in known]
        if missing:
            raise UnknownSourceError(missing[0], known)
        selected = list(dict.fromkeys(source))
    query = LedgerQuery(
        source="",
        resource=resource,
        status=status_filter.value if status_filter else None,
        since=_since(since),
        limit=limit,
    )
    with resolving_once():  # a second read (a full page without a success) reuses the targets
        statuses = collect_status(state.registry(), config, selected, query, dataset=dataset)
        _check_resource(config, project, selected, resource, statuses)
        now = utcnow()
        freshness = freshness_for(state.registry(), config, statuses, now, query, dataset=dataset)
    slots = slots_for(config, statuses, freshness, now)
    stale = stale_by_freshness(
        statuses, freshness, now, config.staleness_days, config.heartbeat_seconds
    )
    if as_json:  # by name, as the seed has it: a script finds a source where it was
        typer.echo(render_json(statuses, now, config.heartbeat_seconds, freshness, slots))
    else:
        from dlt_ops.tables import echo

        notes = _derived_notes(state.registry(), config, selected)
        shown = problems_first(statuses, stale)
        echo([*render_blocks(shown, now, config.heartbeat_seconds, freshness, slots), *notes])
    if fail_on is None:
        return
    tripped = {
        FailOn.failed: lambda: newest_failed(statuses),
        FailOn.stale: lambda: stale,
        FailOn.unreadable: lambda: [s.source for s in unreadable(statuses)],
    }[fail_on]()
    if tripped:  # say which source(s) tripped the alert, on stderr (stdout stays the report)
        typer.echo(f"--fail-on {fail_on.value}: tripped by {', '.join(tripped)}", err=True)
        raise typer.Exit(1)
