"""Helpers to build small projects on disk."""

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


GOOD_SOURCE = """
import dlt
import pydantic


class Row(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    id: int


@dlt.resource(name="rows", columns=Row)
def rows():
    yield {"id": 1}


@dlt.source(name="{name}")
def {name}_source():
    return rows
"""


def good_source(name: str, resource: str = "rows") -> str:
    """A source module that passes every rule."""
    return GOOD_SOURCE.replace("{name}", name).replace('"rows"', f'"{resource}"')


def section(name: str, extra: str = "") -> str:
    """A config section for a source with a valid schedule."""
    return f'\n[sources.{name}.dlt_ops]\nschedule = "@daily"\n{extra}\n'


@pytest.fixture
def run_validate() -> Callable[..., object]:
    """Validate a project root in-process with the installed plugins."""
    from dlt_ops.config import load_project_config
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.project import discover
    from dlt_ops.validate.engine import validate_project

    def run(root: Path, registry: object = None, strict: bool = False) -> object:
        config = load_project_config(root)
        return validate_project(
            config, registry or PluginRegistry(picks=config.plugins), discover(root),
            strict=strict,
        )  # fmt: skip

    return run


def by_rule(report: object, rule: str) -> list:
    """Findings of one rule."""
    return [f for f in report.findings if f.rule == rule]  # type: ignore[attr-defined]


@pytest.fixture
def h() -> object:
    """Helpers (importlib import mode cannot import from conftest)."""
    import types

    return types.SimpleNamespace(good_source=good_source, section=section, by_rule=by_rule)


@pytest.fixture
def exempt() -> Callable[[str, str], str]:
    """Config text exempting ``source`` from ``rule`` with a reason."""

    def text(source: str, rule: str) -> str:
        return f'\n[sources.{source}.dlt_ops.rule_exemptions]\n{rule} = "tested on purpose"\n'

    return text
