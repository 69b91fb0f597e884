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


#: The exit-code contract every command keeps (rendered into docs/cli.md under the intro).
EXIT_CODES: tuple[tuple[str, str], ...] = (
    ("0", "success"),
    ("1", "the operation ran and failed (a run failed, validate found errors, a backfill window "
          "is not covered, `status --fail-on` tripped, a ledger could not be read where a "
          "command needs it)"),
    ("2", "usage or configuration error: nothing was done"),
    ("120", "the command succeeded but its output could not be flushed (the reader went away), "
            "as Python does"),
    ("130", "interrupted: Ctrl-C (SIGINT) **or SIGTERM** (a scheduler, systemd or CI stopping "
            "the process). `pipeline run` and `backfill` turn SIGTERM into the same interrupt "
            "as Ctrl-C, so the run's ledger row (a chunk's state) is ended as `failed` with "
            "`KeyboardInterrupt` before the process exits, and the exit code is 130 for both "
            "signals, not the shell's 143 for SIGTERM. `scheduler run` (without `--once`) stops "
            "on either signal once the runs in flight finish, and exits 0 (its runs' outcomes "
            "are in the ledger)"),
    ("137", "(from the shell) SIGKILL: nothing could be recorded; the row stays `running` until "
            "`status` shows it `abandoned?` and the source's next run closes it"),
)  # fmt: skip


def _exit_codes() -> list[str]:
    rows = [f"| `{code}` | {meaning} |" for code, meaning in EXIT_CODES]
    return ["## Exit codes", "", "| Code | Meaning |", "|---|---|", *rows, ""]


def render_reference(root: Any, prog: str = "dlt-ops") -> str:
    """Markdown for every command: usage line, description, options and arguments."""
    lines = [
        "# CLI reference",
        "",
        "Generated from the command tree by `python -m dlt_ops.cli.reference > docs/cli.md`;",
        "a test fails when this file and the CLI disagree.",
        "",
        *_exit_codes(),
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
