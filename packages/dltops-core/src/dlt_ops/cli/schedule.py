"""``dlt-ops schedule emit``: the project's schedules written for another scheduler."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dlt_ops.cli.help_format import PlainHelpGroup
from dlt_ops.cli.state import AppState, RootOption

schedule_app = typer.Typer(
    cls=PlainHelpGroup,
    no_args_is_help=True,
    help="Write the project's schedules for cron or a CI system.",
)


#: Built-in trigger emitters that name where a run came from and write no schedule files.
_RUN_ORIGINS = frozenset({"cli", "backfill", "y-scheduler", "airflow", "dagster"})


def _target_help() -> str:
    """``--target``'s help: the installed emitters that may write schedule files, read from
    entry-point metadata (no plugin is imported to show help)."""
    from dlt_ops.plugins.entry_points import in_group

    names = dict.fromkeys(["cron", "github-actions"])
    for name, _value, _dist in in_group("dlt_ops.trigger_emitter"):
        if name not in _RUN_ORIGINS:
            names[name] = None
    return f"A schedule target: {', '.join(names)} (the installed trigger emitters)."


@schedule_app.command("emit")
def emit(
    ctx: typer.Context,
    target: Annotated[
        str,
        typer.Option("--target", "-t", help=_target_help()),
    ],
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="File to write ('-' for stdout; default per target)."),
    ] = None,
    root_as: Annotated[
        str | None,
        typer.Option(
            "--root-as",
            help="The project root as the scheduler sees it (default: "
            "this root; '.' for a CI checkout).",
        ),
    ] = None,
    cli: Annotated[
        str | None,
        typer.Option(
            "--cli",
            help="The dlt-ops executable the entries run (default: cron gets this one's "
            "absolute path; github-actions gets `dlt-ops`, installed by the workflow).",
        ),
    ] = None,
    root: RootOption = None,
) -> None:
    """Write a crontab or a GitHub Actions workflow naming every scheduled source; each entry
    runs `dlt-ops pipeline run -s <source> -y --trigger-source <target>`."""
    from dlt_ops.cron import cron_text, schedule_zone
    from dlt_ops.errors import UsageError
    from dlt_ops.scheduler.service import scheduled_sources
    from dlt_ops.scheduler.targets import adapter_packages, this_cli
    from dlt_ops.triggers import ScheduledSource, ScheduleTarget

    state: AppState = ctx.obj.with_root(root)
    config, registry = state.project(), state.registry()
    emitter = registry.get("trigger_emitter", target)
    if not isinstance(emitter, ScheduleTarget):
        raise UsageError(f"trigger emitter {target!r} writes no schedule files; use a target "
                         "such as cron or github-actions.")  # fmt: skip
    sources = []
    for name in scheduled_sources(config):
        cfg = config.source(name)
        schedule = str(cfg.schedule)
        zone = schedule_zone(schedule, cfg.timezone)
        sources.append(ScheduledSource(name, schedule, str(cron_text(schedule)), zone))
    in_ci = target == "github-actions"
    default_root = "." if in_ci else str(config.root)
    text = emitter.render(
        sources,
        root=root_as or default_root,
        trigger_source=target,
        cli=cli or ("dlt-ops" if in_ci else this_cli()),
        packages=adapter_packages(registry, config, [s.name for s in sources]),
    )
    if output is not None and str(output) == "-":
        typer.echo(text, nl=False)
        return
    path = output or config.root / emitter.default_path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {path} ({len(sources)} scheduled source(s), target {target}).")
