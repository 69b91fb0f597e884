"""Validate-specific helpers: known-good and known-bad source modules."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

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
