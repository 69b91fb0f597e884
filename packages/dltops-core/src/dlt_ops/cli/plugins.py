"""``dlt-ops plugins list|doctor``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from dlt_ops.cli.help_format import PlainHelpGroup
from dlt_ops.cli.state import AppState

if TYPE_CHECKING:
    from dlt_ops.plugins import PluginRegistry

plugins_app = typer.Typer(
    cls=PlainHelpGroup, no_args_is_help=True, help="Inspect installed dlt-ops plugins."
)


def _builtin_commands() -> frozenset[str]:
    from dlt_ops.cli.app import COMMANDS

    return frozenset(e.name for e in COMMANDS)


def _registry(ctx: typer.Context) -> PluginRegistry:
    """The registry, with the project's picks when run inside a project."""
    from dlt_ops.errors import ProjectRootNotFoundError

    state: AppState = ctx.obj
    try:
        return state.registry(use_project=True)
    except ProjectRootNotFoundError:
        if state.root is not None:
            raise
        return state.registry(use_project=False)


def _short(names: list[str], most: int = 3) -> str:
    """A table cell: the first few names, then how many more (``--json`` has them all)."""
    if not names:
        return "-"
    shown = ",".join(names[:most])
    return shown if len(names) <= most else f"{shown},+{len(names) - most} more"


@plugins_app.command("list")
def list_plugins(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array on stdout.")] = False,
) -> None:
    """List plugins: kind, entry point, the names it registered, distribution, version, hooks
    and load status."""
    from dlt_ops.doctor import inspect_plugins

    report = inspect_plugins(_registry(ctx), builtin_commands=_builtin_commands())
    if as_json:
        typer.echo(json.dumps([r.to_json() for r in report.rows], indent=2))
        return
    if not report.rows:
        typer.echo("No plugins installed.")
        return
    header = ("KIND", "ENTRY POINT", "REGISTERS", "DISTRIBUTION", "VERSION", "HOOKS", "STATUS")
    rows = [
        (
            r.kind,
            r.name,
            _short(r.registers),
            r.distribution or "<inline>",
            r.version or "-",
            ",".join(h.removeprefix("dlt_ops_") for h in r.hooks) or "-",
            r.status,
        )
        for r in report.rows
    ]
    from dlt_ops.tables import Column, Table, echo

    table = Table([Column(h, status=h == "STATUS") for h in header], gap="  ")
    for row in rows:
        table.add(*row)
    echo([table])


@plugins_app.command("new")
def new(
    kind: Annotated[str, typer.Argument(help="The plugin kind (destination, alert_sink, ...).")],
    name: Annotated[str, typer.Argument(help="The plugin's name: its entry point, dltops-NAME.")],
    directory: Annotated[
        Path, typer.Option("--dir", help="Where the dltops-NAME folder is written.")
    ] = Path("."),
) -> None:
    """Scaffold a plugin distribution: pyproject.toml with the entry point, the hook module,
    a test module that subclasses the kind's kit, and a README; its tests pass as written."""
    from dlt_ops.scaffold import write_plugin

    made = write_plugin(kind, name, directory)
    typer.echo(f"wrote {made.dist} ({len(made.files)} files) in {made.root}")
    typer.echo(f'next: pip install -e "{made.root}[test]" && pytest {made.root}')


@plugins_app.command("doctor")
def doctor(ctx: typer.Context) -> None:
    """Load every plugin; exit 1 on load failures, refused names, plugins without hooks or with
    unmarked/misspelled hook functions, misnamed adapters, name conflicts, unknown kinds and
    stale picks."""
    from dlt_ops.doctor import inspect_plugins
    from dlt_ops.plugins import KINDS

    report = inspect_plugins(_registry(ctx), builtin_commands=_builtin_commands())
    for kind in KINDS:
        rows = [r for r in report.rows if r.kind == kind]
        typer.echo(f"{kind}:" + ("" if rows else " (none)"))
        for r in rows:
            origin = f"[{r.distribution} {r.version}]" if r.distribution else "[<inline>]"
            line = f"  {r.name}  {origin}  {r.module}"
            if r.registers and r.registers != [r.name]:
                line += f"  registers: {', '.join(r.registers)}"
            if r.status in ("failed", "incomplete"):
                line += f"  FAILED: {r.error}"
            elif r.status == "disabled":
                line += f"  disabled by {r.disabled_by} (not loaded)"
            typer.echo(line)
    for kind, name, claimants in report.conflicts:
        who = ", ".join(f"'{c.claimant}' ({c.value})" for c in claimants)
        typer.echo(f"  {kind}/{name}  CONFLICT: {who}")
        typer.echo("  pick one in .dlt/config.toml:")
        typer.echo(f'    [dlt_ops.plugins.{kind}]\n    {name} = "{claimants[0].claimant}"')
    for source in report.unknown_kinds:
        typer.echo(
            f"  unknown plugin kind 'dlt_ops.{source.kind}' for '{source.name}' from "
            f"{source.origin}; valid groups: {', '.join('dlt_ops.' + k for k in KINDS)}"
        )
    for pick in report.stale_picks:
        typer.echo(f"  STALE PICK: {pick}")
    for entry in report.unmatched_disables:  # a note, not a failure: nothing is broken
        typer.echo(f"  note: disable entry {entry} matches no installed plugin")
    if report.ok:
        typer.echo("plugins doctor: OK")
        return
    typer.echo(
        f"plugins doctor: {len(report.failures)} failure(s), {len(report.conflicts)} "
        f"conflict(s), {len(report.unknown_kinds)} unknown kind(s), "
        f"{len(report.stale_picks)} stale pick(s)"
    )
    raise typer.Exit(1)
