"""Lazily registered commands look and behave as if every module had been imported."""

from __future__ import annotations

import inspect
import subprocess
import sys
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


def test_typer_help_module_loads_without_markdown_and_still_has_the_real_classes() -> None:
    code = (
        "import sys\n"
        "import dlt_ops.cli.app\n"
        "import typer.rich_utils as ru\n"
        "assert 'rich.markdown' not in sys.modules and 'rich.traceback' not in sys.modules\n"
        "from rich.markdown import Markdown\n"
        "assert isinstance(ru.Markdown('*x*'), Markdown)\n"
        "from rich.traceback import Traceback\n"
        "assert ru.Traceback.from_exception.__self__ is Traceback\n"
        "assert sys.meta_path[0].__class__.__name__ != '_Finder'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
