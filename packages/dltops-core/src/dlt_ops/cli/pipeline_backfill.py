"""``dlt-ops pipeline backfill``: chunked, resumable, claimable backfills (docs/backfill.md)."""

from __future__ import annotations

import json
import signal
import sys
import time
from typing import TYPE_CHECKING, Annotated, Any

import typer

from dlt_ops.cli.state import AppState, RootOption, not_a_directory

if TYPE_CHECKING:
    from dlt_ops.backfill.executor import ChunkEvent
    from dlt_ops.backfill.plan import BackfillPlan
    from dlt_ops.backfill.service import BackfillSummary


class ChunkReporter:
    """A progress bar on a TTY, one plain line per chunk event otherwise; both on stderr
    (progress is not data: stdout carries only the final tally or ``--json``)."""

    def __init__(self, plan: BackfillPlan, *, quiet: bool = False, tty: bool | None = None):
        self.plan, self.quiet = plan, quiet
        self.tty = sys.stderr.isatty() if tty is None else tty
        self.done = 0
        self._progress: Any = None
        self._task: Any = None
        self._started = time.monotonic()
        #: chunk index → label of the chunks running now (the bar names them)
        self.in_flight: dict[int, str] = {}

    def __enter__(self) -> ChunkReporter:
        if self.tty and not self.quiet:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn(f"backfill {self.plan.backfill_id}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                TextColumn("{task.fields[flight]}"),
                console=Console(stderr=True),
            )
            self._progress.start()
            self._task = self._progress.add_task(
                "chunks", total=self.plan.total, rate="", flight=""
            )
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def _line(self, text: str, *, always: bool = False) -> None:
        if self.quiet:
            return
        if self._progress is not None:
            if always:
                self._progress.console.print(text, markup=False, highlight=False)
        else:
            typer.echo(text, err=True)

    def __call__(self, event: ChunkEvent) -> None:
        """Render one chunk event."""
        label = self.plan.chunks[event.index].label(self.plan.total)
        kind = event.kind
        self._track(event.index, label, running=kind in ("running", "retrying"))
        if kind == "running":
            attempt = f", attempt {event.attempt}" if event.attempt > 1 else ""
            self._line(f"{label}: running (run_id={self.plan.chunks[event.index].run_id}{attempt})")
        elif kind == "completed":
            records = event.records if event.records is not None else "?"
            self._advance()
            self._line(f"{label}: completed ({records} records)")
        elif kind == "skipped":
            self._advance()
            self._line(f"{label}: already completed, skipping")
        elif kind == "held":
            until = f" until its lease expires at {event.until}" if event.until else ""
            self._line(f"{label}: held by another worker ({event.holder}){until}, NOT run here")
        elif kind == "lost":
            self._line(f"{label}: lease lost to another worker", always=True)
        elif kind == "retrying":
            text = f"{label}: failed (attempt {event.attempt}), retrying: {event.error}"
            self._line(text, always=True)
        elif kind == "failed":
            self._line(f"{label}: failed: {event.error}", always=True)

    def _track(self, index: int, label: str, *, running: bool) -> None:
        if running:
            self.in_flight[index] = label
        else:
            self.in_flight.pop(index, None)
        if self._progress is not None:
            self._progress.update(self._task, flight=self.flight())

    def flight(self) -> str:
        """``running: chunk 3/10 [from → to)`` (``+N more`` with parallel workers)."""
        if not self.in_flight:
            return ""
        first, *rest = (self.in_flight[i] for i in sorted(self.in_flight))
        return f"running: {first}" + (f" +{len(rest)} more" if rest else "")

    def _advance(self) -> None:
        self.done += 1
        if self._progress is not None:
            elapsed = max(time.monotonic() - self._started, 1e-6)
            rate = f"{self.done / elapsed * 60:.1f} chunks/min"
            self._progress.update(self._task, advance=1, rate=rate)


def _terminate_as_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"terminated by signal {signum}")


def _dry_run(state: AppState, plan: BackfillPlan, dataset: str | None, as_json: bool) -> None:
    from dlt_ops.backfill.service import dry_run

    planned = dry_run(state.registry(), state.project(), plan, dataset)
    if as_json:
        doc = {
            "backfill_id": plan.backfill_id,
            "source": plan.source,
            "from": plan.window.start.isoformat(),
            "to": plan.window.end.isoformat(),
            "chunk": plan.chunk_label,
            "resources": list(plan.resources),
            "chunks": [
                {
                    "chunk_id": plan.chunks[p.index].chunk_id,
                    "from": plan.chunks[p.index].start.isoformat(),
                    "to": plan.chunks[p.index].end.isoformat(),
                    "run_id": plan.chunks[p.index].run_id,
                    "action": p.action,
                    "status": p.row.status if p.row else None,
                }
                for p in planned
            ],
        }
        typer.echo(json.dumps(doc, indent=2))
        return
    typer.echo(f"dry run: {plan.describe()}")
    for p in planned:
        label = plan.chunks[p.index].label(plan.total)
        if p.action == "skip":
            typer.echo(f"{label}: would skip (already completed)")
        elif p.action == "held":
            assert p.row is not None
            typer.echo(
                f"{label}: held by {p.row.claimed_by} (lease until {p.row.lease_expires_at})"
            )
        else:
            why = f" (status {p.row.status})" if p.row else ""
            typer.echo(f"{label}: would run{why}")
    counts = {a: sum(1 for p in planned if p.action == a) for a in ("run", "skip", "held")}
    typer.echo(f"{counts['run']} to run, {counts['skip']} to skip, {counts['held']} held elsewhere")


def _seed_cursor(state: AppState, plan: BackfillPlan, dataset: str | None, quiet: bool) -> Any:
    """``--seed-cursor``: one ordinary run whose cursors start at the backfill's end."""
    from dlt_ops.runner.run import RunFailedError, RunRequest, execute_run

    request = RunRequest(
        source=plan.source, resources=plan.resources, dataset=dataset,
        trigger_source="backfill", seed_cursor=plan.window,
    )  # fmt: skip
    outcome = execute_run(state.registry(), state.project(), request)
    if not outcome.ok:
        raise RunFailedError(outcome)
    if not quiet:
        loaded = outcome.record.records_loaded
        typer.echo(
            f"✓ cursor seeded to {plan.window.end.isoformat()} by run {outcome.record.run_id} "
            f"({loaded if loaded is not None else '?'} record(s) from there loaded)"
        )
    return outcome.record


def _finish(
    summary: BackfillSummary, as_json: bool, stopped_on: ChunkEvent | None, seeded: Any = None
) -> None:
    from dlt_ops.errors import BackfillChunkError, BackfillNotCoveredError

    if as_json:
        doc = {k: v for k, v in vars(summary).items() if k != "rows"}
        doc["covered"] = summary.covered
        if seeded is not None:
            doc["seed_run_id"] = seeded.run_id
        typer.echo(json.dumps(doc, indent=2))
    else:
        typer.echo(summary.tally())
    if summary.covered:
        return
    hint = "Completed chunks are recorded: re-run the same command to resume"
    if stopped_on is not None:
        raise BackfillChunkError(
            f"chunk {stopped_on.index + 1}/{summary.total} failed: {stopped_on.error}. {hint} "
            f"(or pass --continue-on-error / --max-attempts)."
        )
    missing = summary.total - summary.completed - summary.skipped
    raise BackfillNotCoveredError(
        f"{missing} of {summary.total} chunk(s) not completed ({summary.failed} failed, "
        f"{summary.held} held by another worker, {summary.pending} pending). {hint}; it exits 0 "
        f"only when every chunk is completed."
    )


def backfill(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="Source to backfill.", metavar="SOURCE")],
    start: Annotated[
        str, typer.Option("--from", help="Window start, tz-aware ISO-8601 (inclusive).")
    ],  # fmt: skip
    end: Annotated[str, typer.Option("--to", help="Window end, tz-aware ISO-8601 (exclusive).")],
    chunk: Annotated[str, typer.Option("--chunk", help="Chunk size N{d|h|m}, e.g. 1d, 6h, 30m.")],
    resource: Annotated[
        list[str] | None,
        typer.Option(
            "--resource",
            "-r",
            help="Backfill only this resource (repeatable).",
            callback=not_a_directory,
        ),
    ] = None,
    dataset: Annotated[
        str | None, typer.Option("--dataset", "-d", help="Dataset, overriding the config.")
    ] = None,
    workers: Annotated[
        int, typer.Option("--workers", "-w", min=1, help="Chunks run at once (single writer: 1).")
    ] = 1,
    lease: Annotated[
        str, typer.Option("--lease", help="Claim lease N{s|m|h}, renewed while a chunk runs.")
    ] = "10m",
    max_attempts: Annotated[
        int, typer.Option("--max-attempts", min=1, help="Attempts per failing chunk.")
    ] = 1,
    continue_on_error: Annotated[
        bool,
        typer.Option("--continue-on-error", help="Run the remaining chunks after a failure."),
    ] = False,
    dry: Annotated[
        bool, typer.Option("--dry-run", help="Print the chunk plan and what would skip; no writes.")
    ] = False,
    seed_cursor: Annotated[
        bool,
        typer.Option(
            "--seed-cursor",
            help="When every chunk is done, run the source once with its incremental cursor "
            "moved to --to, so scheduled runs go on from the backfill's end.",
        ),
    ] = False,
    yes: Annotated[
        bool,
        typer.Option("--yes", "-y", help="Do not ask for confirmation (asked on a terminal only)."),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the summary (or dry-run plan) as JSON.")
    ] = False,
    root: RootOption = None,
) -> None:
    """Backfill SOURCE over [--from, --to) in --chunk pieces; resumable and safe to run twice."""
    from dlt_ops.backfill.executor import BackfillOptions
    from dlt_ops.backfill.plan import BackfillPlan, parse_lease
    from dlt_ops.backfill.service import execute_backfill

    state: AppState = ctx.obj.with_root(root)
    plan = BackfillPlan.build(source, start, end, chunk, resource or ())
    options = BackfillOptions(
        dataset=dataset,
        lease=parse_lease(lease),
        max_attempts=max_attempts,
        continue_on_error=continue_on_error,
        workers=workers,
    )
    config = state.project()
    if dry:
        _dry_run(state, plan, dataset, as_json)
        return
    # as `run`: a person at a terminal confirms first; off a terminal (cron, an orchestrator's
    # workers) a backfill proceeds without -y, as it always has
    if not yes and sys.stdin.isatty():
        typer.echo(plan.describe(), err=True)
        if not typer.confirm("Start backfill?", default=True, err=True):
            typer.echo("Aborted: nothing was run.", err=True)
            raise typer.Exit(0)  # declining is a choice, not a failure
    signal.signal(signal.SIGTERM, _terminate_as_interrupt)
    stopped: list[ChunkEvent] = []

    def on_event(event: ChunkEvent) -> None:
        if event.kind == "failed":
            stopped.append(event)
        reporter(event)

    with ChunkReporter(plan, quiet=as_json) as reporter:
        try:
            summary = execute_backfill(state.registry(), config, plan, options, on_event)
        except KeyboardInterrupt:
            typer.echo(
                "interrupted: the running chunk was marked failed; re-run the same command to "
                "resume.",
                err=True,
            )
            raise SystemExit(130) from None
    seeded = (
        _seed_cursor(state, plan, dataset, as_json) if seed_cursor and summary.covered else None
    )
    _finish(summary, as_json, stopped[0] if stopped and not continue_on_error else None, seeded)
