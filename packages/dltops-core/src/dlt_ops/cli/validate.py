"""``dlt-ops pipeline validate [--strict] [--json] [--show-resolved-rules]``."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from dlt_ops.cli.state import AppState, RootOption

if TYPE_CHECKING:
    from dlt_ops.validate.engine import Catalog, ValidationReport


def _show_rules(catalog: Catalog) -> None:
    rules = sorted(catalog.rules.values(), key=lambda r: r.id)
    typer.echo(f"Resolved rules ({len(rules)}):")
    from dlt_ops.tables import Column, Table, echo

    width = max((len(r.id) for r in rules), default=10) + 2
    table = Table((Column("rule", width), Column("on", 4), Column("from")), indent="  ",
                  header=False)  # fmt: skip
    for r in rules:
        later = f"  (provided later: {r.provided_later})" if r.provided_later else ""
        table.add(r.id, "on" if r.enabled else "off", f"{r.distribution}{later}")
    echo([table])
    if catalog.problems:
        typer.echo("\nUnavailable rule providers:")
        for f in catalog.problems:
            typer.echo(f"  {f.field}: {f.message}")
    if catalog.unknown_switches:
        typer.echo(
            f"\n✗ unknown rule id(s) in [dlt_ops.rules]: {', '.join(catalog.unknown_switches)}"
        )
        typer.echo(f"  valid rule ids: {', '.join(sorted(catalog.rules))}")


@contextmanager
def _progress(enabled: bool) -> Iterator[Callable[[str], None]]:
    """A spinner line on stderr (TTY only). No refresh thread: the sandbox forks children and
    forking is only safe while the process is single-threaded."""
    if not enabled:
        yield lambda _label: None
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn

    progress = Progress(
        SpinnerColumn(), TextColumn("Validating sources: {task.description}"),
        console=Console(stderr=True), auto_refresh=False, transient=True,
    )  # fmt: skip
    with progress:
        task = progress.add_task("discovering", total=None)

        def step(label: str) -> None:
            progress.update(task, description=label)
            progress.refresh()

        yield step


def _render(report: ValidationReport) -> None:
    for title, items, glyph in (
        ("warning", report.warnings, "⚠"),
        ("error", report.errors, "✗"),
    ):
        if items:
            typer.echo(f"{glyph} {len(items)} {title}(s):")
            for f in items:
                typer.echo(f"  [{f.source}] {f.field}: {f.message}")
            typer.echo("")
    if report.not_checked:
        typer.echo(f"Not checked (rules provided later): {', '.join(report.not_checked)}")
    if report.errors:
        return
    if report.warnings:
        typer.echo(f"✓ No errors ({len(report.warnings)} warning(s))")
    else:
        typer.echo(f"✓ All sources validated successfully ({report.sources} source(s))")


def validate(
    ctx: typer.Context,
    strict: Annotated[bool, typer.Option("--strict", help="Treat warnings as errors.")] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Findings as one JSON array on stdout.")
    ] = False,
    show_resolved_rules: Annotated[
        bool,
        typer.Option(
            "--show-resolved-rules",
            help="List every rule, on/off and its owning distribution; run no checks.",
        ),
    ] = False,
    root: RootOption = None,
) -> None:
    """Check the project against the rule catalog. Exit 0 clean or warnings only, 1 errors."""
    from dlt_ops.validate.engine import resolve_catalog, validate_project

    state: AppState = ctx.obj if isinstance(ctx.obj, AppState) else AppState()
    config = state.with_root(root).project()
    registry = state.registry()
    if show_resolved_rules:
        catalog = resolve_catalog(registry, dict(config.rules))
        if as_json:
            typer.echo(json.dumps([
                {"id": r.id, "enabled": r.enabled, "distribution": r.distribution,
                 "provided_later": r.provided_later, "description": r.rule.description}
                for r in sorted(catalog.rules.values(), key=lambda r: r.id)
            ], indent=2))  # fmt: skip
        else:
            _show_rules(catalog)
        if catalog.unknown_switches or catalog.problems:
            raise typer.Exit(1)
        return
    from dlt_ops.project import discover

    with _progress(sys.stderr.isatty()) as step:
        step("discovering")
        project = discover(config.root)
        report = validate_project(config, registry, project, strict=strict, on_progress=step)
    if as_json:
        typer.echo(json.dumps([f.to_json() for f in report.findings], indent=2))
    else:
        _render(report)
    if report.errors:
        raise typer.Exit(1)
