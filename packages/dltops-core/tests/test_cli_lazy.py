"""Lazily registered commands look and behave as if every module had been imported."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
import typer

from dlt_ops.cli.app import app
from dlt_ops.cli.lazy import LazyGroup


def _root() -> Any:
    return typer.main.get_command(app)  # a fresh command tree: nothing loaded yet


def _load_all(group: Any) -> None:
    for command in group.commands.values():  # values() builds every command
        if hasattr(command, "commands"):
            _load_all(command)


def _lazy_groups(group: Any) -> list[Any]:
    found = [group] if isinstance(group, LazyGroup) else []
    for name in group.commands:
        command = group.commands[name]
        if hasattr(command, "commands"):
            found += _lazy_groups(command)
    return found


def _first_paragraph(command: Any) -> str:
    return inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0].strip()


def _render(argv: list[str], *, load: bool, capsys: pytest.CaptureFixture[str]) -> str:
    root = _root()
    if load:
        _load_all(root)
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        root.main(argv, prog_name="dlt-ops")
    assert exit_.value.code == 0
    return capsys.readouterr().out


def test_every_summary_is_the_commands_own_first_paragraph() -> None:
    groups = _lazy_groups(_root())
    assert len(groups) >= 2  # the root and `pipeline`
    for group in groups:
        for entry in group.entries:
            actual = _first_paragraph(group.commands[entry.name])
            assert entry.summary == actual, (
                f"{entry.name!r}: its summary in COMMANDS (dlt_ops/cli/app.py or "
                f"dlt_ops/cli/pipeline.py) must read {actual!r}"
            )


@pytest.mark.parametrize("argv", [["--help"], ["pipeline", "--help"]])
def test_help_from_summaries_equals_help_from_loaded_commands(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    lazy = _render(argv, load=False, capsys=capsys)
    assert "status" in lazy or "pipeline" in lazy
    assert lazy == _render(argv, load=True, capsys=capsys)


def test_a_mistyped_command_still_gets_a_suggestion(cli: Any) -> None:
    result = cli("pipline")
    assert result.exit_code == 2
    assert "Did you mean 'pipeline'?" in result.output


def test_subcommands_run_through_the_lazy_groups(cli: Any) -> None:
    assert cli("--version").stdout.strip().startswith("dlt-ops ")
    result = cli("pipeline", "status", "--help")
    assert result.exit_code == 0
    assert "--fail-on" in result.stdout


def _groups(group: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found = [(path, group)]
    for name in group.commands:
        command = group.commands[name]
        if hasattr(command, "commands"):
            found += _groups(command, (*path, name))
    return found


def test_every_group_help_lists_whole_summaries(capsys: pytest.CaptureFixture[str]) -> None:
    """Click's plain formatter would cut a summary at ~45 characters or its first full stop."""
    groups = _groups(_root())
    assert len(groups) >= 8
    for path, group in groups:
        # compared without whitespace: wrapping may break a line after a hyphen
        shown = "".join(_render([*path, "--help"], load=False, capsys=capsys).split())
        for name in group.commands:
            whole = "".join(_first_paragraph(group.commands[name]).split())
            assert f"{name}{whole}" in shown, f"dlt-ops {' '.join(path)} --help cuts {name!r}"
