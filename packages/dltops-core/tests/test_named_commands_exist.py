"""Messages advertise only what exists: every ```dlt-ops ...``` command and option quoted in
core's source resolves in the CLI."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import typer

from dlt_ops.cli.app import app

CORE = Path(__file__).resolve().parents[1] / "src" / "dlt_ops"
QUOTED = re.compile(r"`dlt-ops ([^`]+)`")


def _resolve(root: Any, words: list[str]) -> str | None:
    """Why ``words`` is not a command line the CLI knows (``None`` when it is)."""
    ctx = root.context_class(root)
    command = root
    for word in words:
        if word.startswith("-"):
            names = {o for p in command.params for o in getattr(p, "opts", [])} | {"--help"}
            if word.split("=")[0] not in names:
                return f"no option {word} on {command.name}"
            continue
        if hasattr(command, "get_command"):  # a group (lazy ones included)
            sub = command.get_command(ctx, word)
            if sub is None:
                return f"no command {word!r} under {command.name}"
            command = sub
    return None


def test_every_quoted_command_exists() -> None:
    root = typer.main.get_command(app)
    problems = []
    for path in CORE.rglob("*.py"):
        for match in QUOTED.finditer(path.read_text(encoding="utf-8")):
            words = [w for w in match.group(1).split() if re.fullmatch(r"-{0,2}[a-z][a-z-]*", w)]
            why = _resolve(root, words)
            if why:
                problems.append(f"{path.relative_to(CORE)}: `dlt-ops {match.group(1)}`: {why}")
    assert problems == []
