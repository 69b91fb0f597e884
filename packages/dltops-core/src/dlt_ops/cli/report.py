"""``dlt-ops report``: write the fleet report (one self-contained HTML file)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dlt_ops.cli.state import AppState, RootOption


def report(
    ctx: typer.Context,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Where to write the HTML file.")
    ] = Path("dlt-ops-report.html"),
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Runs per source.")] = 30,
    root: RootOption = None,
) -> None:
    """Write the fleet report: one self-contained HTML file (no network, no script needed).

    Each source's newest status and staleness, its run history (duration and records, by
    outcome), each backfill's chunks, receipt totals and cost, quarantined rows and open schema
    drift, read from the ledgers only; ledgers that could not be read are named in it. Sources
    whose newest run failed or whose ledger could not be read come first, then stale ones.
    Exit 1 when no source's ledger could be read (the file is written all the same).
    """
    from dlt_ops.ledger.status import utcnow
    from dlt_ops.project.discovery import discover
    from dlt_ops.report.collect import collect
    from dlt_ops.report.html import render

    state: AppState = ctx.obj.with_root(root)
    config = state.project()
    sources = sorted(discover(config.root).sources)
    fleet = collect(state.registry(), config, sources, utcnow(), limit=limit)
    output.write_text(render(fleet), encoding="utf-8")
    for line in fleet.unreadable:
        typer.echo(f"! {line}", err=True)
    typer.echo(f"wrote {output} ({len(sources)} source(s))")
    if fleet.nothing_read:  # an outage, not a quiet fleet: a scheduled report must not pass
        typer.echo("error: no source's runs ledger could be read; the report shows none of "
                   "their runs (see the reasons above).", err=True)  # fmt: skip
        raise typer.Exit(1)
