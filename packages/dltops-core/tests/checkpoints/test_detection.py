"""Static detection (Phase 1 AST) of ``@with_checkpoints`` feeds validate and preflight."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from dlt_ops.project.discovery import discover

CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "raw"

[sources.s.dlt_ops]
schedule = "@daily"
"""

RESOURCE = """
import dlt
{imports}

@dlt.resource(name="events")
{decorator}
def events(ts=dlt.sources.incremental("ts", initial_value=0)):
    yield []
"""

SOURCE = """
import dlt
from ..resource.events import events

@dlt.source(name="s")
def s_source():
    return events
"""


@pytest.mark.parametrize(
    ("imports", "decorator", "detected"),
    [
        ("from dlt_ops import with_checkpoints", '@with_checkpoints(cursor_field="ts")', True),
        ("import dlt_ops", '@dlt_ops.with_checkpoints(cursor_field="ts")', True),
        ("import dlt_ops as ops", '@ops.with_checkpoints(cursor_field="ts")', True),
        # documented escape: an alias defeats the name match (the runtime backstop covers it)
        ("from dlt_ops import with_checkpoints as keep", '@keep(cursor_field="ts")', False),
        ("", "", False),
    ],
)
def test_uses_checkpoints(tmp_path: Path, imports: str, decorator: str, detected: bool) -> None:
    files = {
        ".dlt/config.toml": CONFIG,
        "p/resource/events.py": RESOURCE.format(imports=imports, decorator=decorator),
        "p/source/s.py": SOURCE,
    }
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    assert discover(tmp_path).source("s").uses_checkpoints is detected


REST_API_SOURCE = """
import dlt
from dlt.sources.rest_api import rest_api_resources
{imports}

@dlt.source(name="s")
def s_source():
    return {call}(rest_api_resources(CONFIG), ["events"])
"""


@pytest.mark.parametrize(
    ("imports", "call", "detected"),
    [
        ("from dlt_ops import rest_api_checkpoints", "rest_api_checkpoints", True),
        ("import dlt_ops", "dlt_ops.rest_api_checkpoints", True),
        ("", "list", False),
    ],
)
def test_rest_api_checkpoints_call_is_detected(
    tmp_path: Path, imports: str, call: str, detected: bool
) -> None:
    files = {
        ".dlt/config.toml": CONFIG,
        "p/source/s.py": REST_API_SOURCE.format(imports=imports, call=call),
    }
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    assert discover(tmp_path).source("s").uses_checkpoints is detected
