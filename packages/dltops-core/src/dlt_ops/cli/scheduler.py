"""``dlt-ops scheduler run``: the built-in scheduler for one machine (trigger ``y-scheduler``)."""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from dlt_ops.cli.help_format import PlainHelpGroup
from dlt_ops.cli.state import AppState, RootOption

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.scheduler.attempt import Tick

scheduler_app = typer.Typer(
    cls=PlainHelpGroup,
    no_args_is_help=True,
    help="Run the project's schedules on this machine (y-scheduler).",
)


def _line(tick: Tick) -> str:
    slot = tick.slot.isoformat().replace("+00:00", "Z")
    if tick.skipped:
        return f"- {tick.source} (slot {slot}): skipped: {tick.skipped}"
    if tick.error and tick.run_id is None:
        return f"✗ {tick.source} (slot {slot}): refused: {tick.error}"
    mark = "✓" if tick.ok else "✗"
    tail = f": {tick.error}" if tick.error else ""
    tries = f" (attempt {tick.attempts})" if tick.attempts > 1 else ""
    return f"{mark} {tick.source} (slot {slot}): run {tick.run_id} {tick.status}{tries}{tail}"


@scheduler_app.command("run")
def run(
    ctx: typer.Context,
    once: Annotated[
        bool, typer.Option("--once", help="Run what is due now, then exit (for cron/CI).")
    ] = False,
    max_parallel: Annotated[
        int, typer.Option("--max-parallel", min=1, help="Due sources run at most N at a time.")
    ] = 1,
    windowed: Annotated[
        bool,
        typer.Option(
            "--windowed",
            help="Bound each run to the interval since the last completed window (else the "
            "previous slot) up to its slot, through every incremental.",
        ),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="With --once: print what each due source came to.")
    ] = False,
    serve_at: Annotated[
        str | None,
        typer.Option(
            "--serve",
            metavar="HOST:PORT",
            help="While scheduling, serve /metrics (Prometheus), /healthz and the live fleet "
            "report (/) on HOST:PORT; port 0 picks a free one. Not with --once.",
        ),
    ] = None,
    root: RootOption = None,
) -> None:
    """Run each source whose schedule is due (against its newest ledger run), as y-scheduler.

    Without --once it loops until SIGTERM or Ctrl-C, then lets the runs in flight finish.
    Exit 1 when a run failed (with --once).
    """
    from dlt_ops.scheduler.service import run_due, serve

    state: AppState = ctx.obj.with_root(root)
    config, registry = state.project(), state.registry()
    if once and serve_at is not None:
        from dlt_ops.errors import UsageError

        raise UsageError("--serve needs the loop: drop --once (or --serve).")
    if once:
        ticks = run_due(registry, config, max_parallel=max_parallel, windowed=windowed)
        if as_json:
            typer.echo(json.dumps([{**vars(t), "slot": t.slot.isoformat()} for t in ticks],
                                  indent=2))  # fmt: skip
        else:
            for tick in ticks:
                typer.echo(_line(tick))
            if not ticks:
                typer.echo("nothing due.")
        if not all(t.ok for t in ticks):
            raise typer.Exit(1)
        return
    stop = threading.Event()

    def _stop(signum: int, frame: object) -> None:
        typer.echo("stopping: runs in flight finish first.", err=True)
        stop.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    typer.echo("scheduler running (SIGTERM or Ctrl-C stops it).", err=True)
    with _serving(registry, config, serve_at) as ticked:

        def report(tick: Tick) -> None:
            ticked()
            typer.echo(_line(tick))

        serve(registry, config, stop=stop, max_parallel=max_parallel, windowed=windowed,
              report=report)  # fmt: skip


@contextmanager
def _serving(
    registry: PluginRegistry, config: ProjectConfig, serve_at: str | None
) -> Iterator[Callable[[], None]]:
    """The --serve HTTP server for the loop's lifetime; yields what to call on each tick."""
    if serve_at is None:
        yield lambda: None
        return
    from dlt_ops.metrics.server import FleetServer, Health, parse_address
    from dlt_ops.project.discovery import discover

    health = Health()
    address = parse_address(serve_at)
    server = FleetServer(registry, config, address, health=health,
                         sources=lambda: sorted(discover(config.root).sources)).start()  # fmt: skip
    typer.echo(f"serving {server.url} (/metrics, /healthz, /)", err=True)
    try:
        yield health.tick
    finally:
        server.close()
