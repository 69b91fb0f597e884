"""``dlt-ops metrics``: the fleet in Prometheus text exposition format, on stdout."""

from __future__ import annotations

from typing import Annotated

import typer

from dlt_ops.cli.state import AppState, RootOption


def metrics(
    ctx: typer.Context,
    source: Annotated[
        list[str] | None,
        typer.Option("--source", "-s", help="Only these sources (repeatable; default: all)."),
    ] = None,
    root: RootOption = None,
) -> None:
    """Print the fleet in Prometheus text exposition format.

    For a textfile collector or a push gateway; `scheduler run --serve` serves the same at
    /metrics. Per source, from the runs ledger, the receipts and the backfill state: runs by status,
    the newest run's start, end and outcome, rows loaded, cost by basis, running and
    abandoned runs, backfill chunks by status, seconds since the last success, the freshness
    verdict. A ledger that
    could not be read is dlt_ops_ledger_up 0, never zeros.
    """
    from dlt_ops.errors import UsageError
    from dlt_ops.ledger.status import utcnow
    from dlt_ops.metrics.exposition import render
    from dlt_ops.metrics.fleet import collect_fleet
    from dlt_ops.project.discovery import discover

    state: AppState = ctx.obj.with_root(root)
    config, registry = state.project(), state.registry()
    known = sorted(discover(config.root).sources)
    unknown = sorted(set(source or ()) - set(known))
    if unknown:
        raise UsageError(f"unknown source(s): {', '.join(unknown)}; known: {', '.join(known)}")
    chosen = sorted(set(source)) if source else known
    body = render(lambda: collect_fleet(registry, config, chosen, utcnow()))
    typer.echo(body.decode("utf-8"), nl=False)
