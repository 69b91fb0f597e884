"""Render the CLI reference (docs/cli.md) from the command tree itself, so it cannot drift."""

from __future__ import annotations

import sys
from typing import Any

# typer ships its own copy of click, so commands are duck-typed here rather than isinstance-checked


def _walk(cmd: Any, path: list[str]) -> list[tuple[list[str], Any]]:
    out = [(path, cmd)]
    if getattr(cmd, "commands", None):
        for name in sorted(cmd.commands):
            out.extend(_walk(cmd.commands[name], [*path, name]))
    return out


def _param_row(param: Any) -> str:
    if param.param_type_name == "argument":
        need = "required" if param.required else "optional"
        help_text = (getattr(param, "help", None) or "").replace("|", "\\|")
        return f"| `{param.name.upper()}` | argument | {help_text} ({need}) |"
    names = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])
    help_text = (param.help or "").replace("|", "\\|").replace("\n", " ")
    default = param.default
    shown = ""
    if param.required:
        shown = " (required)"
    elif default not in (None, False, (), []) and not callable(default):
        shown = f" (default: `{default.value if hasattr(default, 'value') else default}`)"
    return f"| {names} | option | {help_text}{shown} |"


def render_reference(root: Any, prog: str = "dlt-ops") -> str:
    """Markdown for every command: usage line, description, options and arguments."""
    lines = [
        "# CLI reference",
        "",
        "Generated from the command tree by `python -m dlt_ops.cli.reference > docs/cli.md`;",
        "a test fails when this file and the CLI disagree.",
        "",
    ]
    for path, cmd in _walk(root, []):
        if cmd.hidden:
            continue
        title = " ".join([prog, *path])
        lines += [f"## `{title}`", ""]
        doc = (cmd.help or "").strip().split("\n\n")[0].replace("\n", " ")
        if doc:
            lines += [doc, ""]
        params = [
            p for p in cmd.params if p.name not in ("help", "install_completion", "show_completion")
        ]
        if params:
            lines += ["| Name | Kind | Meaning |", "|---|---|---|"]
            lines += [_param_row(p) for p in params]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def main() -> None:
    """Print the reference for the installed CLI."""
    import typer

    from dlt_ops.cli.app import app

    sys.stdout.write(render_reference(typer.main.get_command(app)))


if __name__ == "__main__":
    main()
