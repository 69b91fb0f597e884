"""Throwaway projects whose source reads its rows from ``<root>/rows.json`` at extract time."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

SOURCE = """
import json
import os
from pathlib import Path

import dlt
import pydantic


class Typed(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    id: int
    kind: str
    note: str | None = None  # a defaulted field: required_columns cannot fire on it


def _rows(name):
    return json.loads((Path(os.environ["DLT_PROJECT_DIR"]) / "rows.json").read_text())[name]


@dlt.resource(name="events", primary_key="id", write_disposition="append")
def events(cursor=dlt.sources.incremental("id", initial_value=0)):
    yield _rows("events")


@dlt.resource(name="typed", columns=Typed, write_disposition="append")
def typed():
    yield _rows("typed")


@dlt.source(name="src")
def src_source():
    return events, typed
"""

BASE = """
[dlt_ops]
default_destination = "{destination}"
default_dataset = "ds"

[sources.src.dlt_ops]
schedule = "@daily"
"""


def rows(*ids: int, kind: str | None = "a", **extra: Any) -> list[dict[str, Any]]:
    """Event rows with the given ids (``kind=None`` leaves the key out)."""
    out = []
    for i in ids:
        row: dict[str, Any] = {"id": i, **extra}
        if kind is not None:
            row["kind"] = kind
        out.append(row)
    return out


class Project:
    """A project root plus helpers to rewrite its config and data."""

    def __init__(self, root: Path, destination: str) -> None:
        self.root, self.destination = root, destination

    def configure(self, assertions: str = "", extra: str = "") -> Project:
        text = BASE.format(destination=self.destination) + textwrap.dedent(assertions) + extra
        (self.root / ".dlt" / "config.toml").write_text(text)
        return self

    def data(self, events: list[dict[str, Any]], typed: list[dict[str, Any]] | None = None) -> None:
        payload = {"events": events, "typed": typed or []}
        (self.root / "rows.json").write_text(json.dumps(payload))

    def run(self, *resources: str, registry: Any = None) -> Any:
        from dlt_ops.config import load_project_config
        from dlt_ops.plugins import PluginRegistry
        from dlt_ops.runner.run import RunRequest, execute_run

        config = load_project_config(self.root)
        reg = registry or PluginRegistry(picks=config.plugins)
        request = RunRequest(source="src", resources=resources or ("events",))
        return execute_run(reg, config, request)

    def duck(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        import duckdb

        with duckdb.connect(str(self.root / "src_pipeline.duckdb"), read_only=True) as con:
            return con.execute(sql, params).fetchall()


@pytest.fixture
def make_project(tmp_path: Path) -> Callable[..., Project]:
    """``make_project(destination="duckdb")`` → a :class:`Project` with the rows source."""

    def make(destination: str = "duckdb", name: str = "proj") -> Project:
        root = tmp_path / name
        (root / ".dlt").mkdir(parents=True)
        (root / "pipe" / "source").mkdir(parents=True)
        (root / "pipe" / "source" / "src.py").write_text(SOURCE)
        return Project(root, destination).configure()

    return make
