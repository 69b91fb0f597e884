"""``dlt-ops pipeline run``."""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from dlt_ops.cli.progress import ProgressMode
from dlt_ops.cli.state import AppState, RootOption, not_a_directory

if TYPE_CHECKING:
    from dlt_ops.runner.model import RunOutcome, RunRequest
    from dlt_ops.runner.prepare import PreparedRun

_WORKER_ENV = {
    "normalize_workers": "NORMALIZE__WORKERS",
    "load_workers": "LOAD__WORKERS",
    "file_max_items": "NORMALIZE__DATA_WRITER__FILE_MAX_ITEMS",
}


@contextmanager
def _worker_env(values: dict[str, int | None]) -> Iterator[None]:
    """Set dlt's worker env vars for this run only (env is dlt's top-priority provider)."""
    saved = {key: os.environ.get(env) for key, env in _WORKER_ENV.items()}
    try:
        for key, value in values.items():
            if value is not None:
                os.environ[_WORKER_ENV[key]] = str(value)
        yield
    finally:
        for key, env in _WORKER_ENV.items():
            if saved[key] is None:
                os.environ.pop(env, None)
            else:
                os.environ[env] = saved[key]  # type: ignore[assignment]


def _wait_seconds(wait: bool, timeout: str | None) -> float | None:
    """``--wait`` / ``--wait-timeout`` → seconds to wait for the source's lease (``None``: refuse
    at once when it is held)."""
    import math
    import re

    from dlt_ops.errors import UsageError

    if timeout is None:
        return math.inf if wait else None
    match = re.fullmatch(r"(\d+)([smh])", timeout.strip())
    if match is None:
        raise UsageError(f"invalid --wait-timeout {timeout!r}: <N>s / <N>m / <N>h (e.g. 90s, 10m).")
    return int(match.group(1)) * {"s": 1, "m": 60, "h": 3600}[match.group(2)]


def _terminate_as_interrupt(signum: int, frame: object) -> None:
    # SIGTERM (a scheduler stopping us) ends the run like Ctrl-C: the ledger row goes terminal
    raise KeyboardInterrupt(f"terminated by signal {signum}")


def _print_reports(outcome: RunOutcome) -> None:
    """What observers reported (the receipt table) goes to stderr, so stdout stays clean for
    ``--json``."""
    for report in outcome.reports:
        typer.echo(report, err=True)


def _configuration_block(request: RunRequest, prepared: PreparedRun) -> str:
    """What is about to run, where, and at which tier (stderr), once everything that can be
    refused without running was checked (an unknown source prints no block, only its error)."""
    from dlt_ops.target import Tier
    from dlt_ops.validate.capability import ADAPTER_GATED_FEATURES

    where, resources = prepared.target, request.resources
    tier: str = where.tier
    if where.tier is Tier.CORE:
        tier = f"core (no adapter: {', '.join(ADAPTER_GATED_FEATURES)} unavailable)"
    elif where.tier is Tier.DERIVED:
        tier = "derived (an adapter built from dlt's SQL client; untested)"
    return "\n".join([
        "Pipeline configuration", f"  Source: {request.source}",
        f"  Resources: {', '.join(resources) if resources else 'all'}",
        f"  Destination: {where.engine}", f"  Dataset: {where.dataset}",
        f"  Capabilities: {tier}",
    ])  # fmt: skip


def run(
    ctx: typer.Context,
    source: Annotated[str, typer.Option("--source", "-s", help="Source to run.")],
    resource: Annotated[
        list[str] | None,
        typer.Option(
            "--resource",
            "-r",
            help="Run only this resource (repeatable).",
            callback=not_a_directory,
        ),
    ] = None,
    dataset: Annotated[
        str | None, typer.Option("--dataset", "-d", help="Dataset, overriding the config.")
    ] = None,
    start: Annotated[
        str | None,
        typer.Option("--from", help="Window start, tz-aware ISO-8601 (inclusive); needs --to."),
    ] = None,
    end: Annotated[
        str | None,
        typer.Option("--to", help="Window end, tz-aware ISO-8601 (exclusive); needs --from."),
    ] = None,
    trigger_source: Annotated[
        str,
        typer.Option("--trigger-source", help="Registered trigger emitter recorded in the ledger."),
    ] = "cli",
    run_id: Annotated[
        str | None, typer.Option("--run-id", help="Ledger run id (default: a new uuid4 hex).")
    ] = None,
    normalize_workers: Annotated[
        int | None, typer.Option("--normalize-workers", "-n", min=1, help="dlt normalize workers.")
    ] = None,
    load_workers: Annotated[
        int | None, typer.Option("--load-workers", "-l", min=1, help="dlt load workers.")
    ] = None,
    file_max_items: Annotated[
        int | None,
        typer.Option("--file-max-items", "-f", min=1, help="dlt items per load file."),
    ] = None,
    wait: Annotated[
        bool,
        typer.Option("--wait", help="When another run holds the source, wait for it to end."),
    ] = False,
    wait_timeout: Annotated[
        str | None,
        typer.Option(
            "--wait-timeout",
            help="Wait at most this long for the source (N{s|m|h}, e.g. 90s, 10m); implies --wait.",
        ),
    ] = None,
    drop_pending: Annotated[
        bool,
        typer.Option(
            "--drop-pending",
            help="First remove the source's local dlt working dir (pending packages, local "
            "state; recorded in the ledger): the recovery from a half-written one.",
        ),
    ] = False,
    progress: Annotated[
        ProgressMode,
        typer.Option(
            "--progress",
            help="Progress on stderr (step, rows per table, elapsed): auto = on a terminal only; "
            "plain = a line every few seconds, also when piped; off. Never with --json.",
        ),
    ] = ProgressMode.auto,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the run's ledger row as JSON on stdout.")
    ] = False,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet",
            "-q",
            help="Print only errors: no configuration block, progress, receipt or success line "
            "(the exit code and the ledger row say how it went). Needs -y.",
        ),
    ] = False,
    root: RootOption = None,
) -> None:
    """Run one source: ledger row, preflight, extract, normalize, load."""
    from contextlib import nullcontext

    from dlt_ops.cli.progress import run_progress
    from dlt_ops.errors import DltOpsError, InterruptedRunError, UsageError
    from dlt_ops.runner.run import RunFailedError, RunRequest, execute_run, prepare_for
    from dlt_ops.runner.window import window_from_options

    if quiet:
        from dlt_ops.log import only_errors

        only_errors()
    state: AppState = ctx.obj.with_root(root)
    config = state.project()
    window = window_from_options(start, end)
    request = RunRequest(
        source=source,
        resources=tuple(resource or ()),
        dataset=dataset,
        window=window,
        trigger_source=trigger_source,
        run_id=run_id,
        wait=_wait_seconds(wait, wait_timeout),
        drop_pending=drop_pending,
        progress=(display := run_progress(progress, as_json=as_json or quiet)),
    )
    if quiet and not yes:
        raise UsageError("--quiet asks nothing: pass -y/--yes with it.")
    if not yes and not sys.stdin.isatty():
        raise UsageError("not a terminal: pass -y/--yes to run without confirmation.")
    prepared = prepare_for(state.registry(), config, request)  # refusals: exit 2, nothing written
    if not quiet:
        typer.echo(_configuration_block(request, prepared), err=True)
    if not yes and not typer.confirm("Start pipeline?", default=True, err=True):
        typer.echo("Aborted: nothing was run.", err=True)
        raise typer.Exit(0)  # declining is a choice, not a failure
    signal.signal(signal.SIGTERM, _terminate_as_interrupt)
    with _worker_env(
        {
            "normalize_workers": normalize_workers,
            "load_workers": load_workers,
            "file_max_items": file_max_items,
        }
    ):
        try:
            with display if display is not None else nullcontext():
                outcome = execute_run(state.registry(), config, request, prepared=prepared)
        except KeyboardInterrupt:
            raise InterruptedRunError(
                "interrupted: the run's ledger row was ended as failed."
            ) from None
    record = outcome.record
    if not quiet:
        _print_reports(outcome)
    if as_json:
        typer.echo(json.dumps(record.as_json(), indent=2))
    if outcome.ok:
        if not as_json and not quiet:
            loaded = record.records_loaded if record.records_loaded is not None else "?"
            typer.echo(f"✓ run {record.run_id} completed: {loaded} record(s) loaded")
        return
    error = outcome.error
    # the run wrote its ledger row, so it did something: exit 1 (2 means nothing was done);
    # only codes beyond 2 (an interrupted run's 130) pass through
    if isinstance(error, DltOpsError) and error.exit_code > 2:
        raise error
    raise RunFailedError(outcome)
