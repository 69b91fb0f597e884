"""How dlt-ops help reads: plain text, command lists with whole summaries, Unix metavars.

Help renders through click's plain formatter (the app sets ``rich_markup_mode=None``), not
typer's rich panels: rich and its markdown machinery cost ~110 ms of every ``--help`` and
usage error, more than the rest of start-up together, and the help text carries no markup.
Click's formatter cuts each command's summary at its first full stop or ~45 characters with
"..."; :class:`PlainHelpGroup` lists the whole first paragraph instead, wrapped.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperArgument, TyperGroup


def summary(help_text: str | None) -> str:
    """The first paragraph of a command's help, on one line."""
    return " ".join((help_text or "").split("\n\n", 1)[0].split())


class PlainHelpGroup(TyperGroup):
    """A command group whose help lists each subcommand with its whole first paragraph."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.short_help or summary(command.help)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def plain_metavars() -> None:
    """Usage lines name arguments the Unix way, ``SOURCE`` and ``[ROOT]``, not typer's
    ``{source}`` (braces read as an unfilled template); idempotent."""
    original = TyperArgument.make_metavar
    if getattr(original, "_dlt_ops", False):
        return

    def make_metavar(self: TyperArgument, ctx: Any, *, usage: bool = False) -> str:
        var = original(self, ctx, usage=usage)
        if usage and var.startswith("{") and "}" in var:
            inner, rest = var[1:].split("}", 1)
            return inner.upper() + rest
        if usage and var.startswith("[") and "]" in var:
            inner, rest = var[1:].split("]", 1)
            return f"[{inner.upper()}]{rest}"
        return var

    make_metavar._dlt_ops = True  # type: ignore[attr-defined]
    TyperArgument.make_metavar = make_metavar  # type: ignore[method-assign]
