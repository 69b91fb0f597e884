"""docs/cli.md is the CLI's own description; every command and option explains itself."""

from __future__ import annotations

from pathlib import Path

import typer

from dlt_ops.cli.app import app
from dlt_ops.cli.reference import _walk, render_reference

DOC = Path(__file__).resolve().parents[3] / "docs" / "cli.md"


def test_cli_reference_is_current() -> None:
    expected = render_reference(typer.main.get_command(app))
    assert DOC.read_text() == expected, (
        "docs/cli.md is stale: run `.venv/bin/python -m dlt_ops.cli.reference > docs/cli.md`"
    )


def test_every_command_and_option_has_help() -> None:
    missing = []
    for path, cmd in _walk(typer.main.get_command(app), []):
        if not (cmd.help or "").strip():
            missing.append(" ".join(path) or "<root>")
        for param in cmd.params:
            if param.param_type_name == "option" and not (param.help or "").strip():
                missing.append(f"{' '.join(path)} {param.opts[0]}")
    assert missing == []
