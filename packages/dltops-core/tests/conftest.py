"""Shared fixtures for the core tests: small projects on disk and an in-process CLI."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

BASE_CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "raw"
"""


def write(root: Path, rel: str, text: str) -> Path:
    """Write dedented ``text`` to ``root/rel``."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


@pytest.fixture
def make_project(tmp_path: Path) -> Callable[..., Path]:
    """``make_project({"p/source/a.py": "...", ...}, config=...)`` → the project root."""

    def build(files: dict[str, str], config: str = "", root: Path | None = None) -> Path:
        root = root or tmp_path / "proj"
        write(root, ".dlt/config.toml", BASE_CONFIG + textwrap.dedent(config))
        for rel, text in files.items():
            write(root, rel, text)
        return root

    return build


class CliResult:
    """Exit code, stdout and stderr of one in-process CLI invocation."""

    def __init__(self, exit_code: int, stdout: str, stderr: str) -> None:
        self.exit_code, self.stdout, self.stderr = exit_code, stdout, stderr
        self.output = stdout + stderr


@pytest.fixture
def cli() -> Callable[..., CliResult]:
    """Invoke ``dlt-ops`` in-process the way the console script does (errors → exit codes)."""
    from typer.testing import CliRunner

    from dlt_ops.cli import app
    from dlt_ops.errors import DltOpsError

    def invoke(*args: str) -> CliResult:
        result = CliRunner().invoke(app, list(args))
        code, err = result.exit_code, result.stderr if result.stderr_bytes else ""
        if isinstance(result.exception, DltOpsError):
            code, err = result.exception.exit_code, err + f"error: {result.exception}\n"
        elif result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        return CliResult(code, result.stdout, err)

    return invoke
