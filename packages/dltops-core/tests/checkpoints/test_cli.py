"""``checkpoints list|cleanup`` and the importable API: resolution, empty states, usage errors."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dlt_ops import cleanup_checkpoints, list_checkpoints
from dlt_ops.errors import DltOpsError, IdentifierError, UnknownSourceError, UsageError

EXAMPLE = Path(__file__).resolve().parents[4] / "examples" / "checkpoints_demo"
PIPELINE = "github_events_api_pipeline"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".dlt-ops", "*.duckdb*"))
    return root


@pytest.fixture
def cli() -> Callable[..., tuple[int, str]]:
    from typer.testing import CliRunner

    from dlt_ops.cli import app

    def invoke(*args: str) -> tuple[int, str]:
        result = CliRunner().invoke(app, list(args))
        if isinstance(result.exception, DltOpsError):
            return result.exception.exit_code, f"error: {result.exception}"
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        return result.exit_code, result.stdout

    return invoke


def _seed_rows(project: Path) -> None:
    """Rows of two resources through the adapter session the CLI itself would use."""
    from datetime import UTC, datetime

    from dlt_ops.checkpoints.table import COLUMNS, statements, table_spec
    from dlt_ops.config import load_project_config
    from dlt_ops.destinations import open_session, resolve_destination
    from dlt_ops.plugins import PluginRegistry

    config = load_project_config(project)
    now = datetime(2026, 7, 16, 15, 52, 1, tzinfo=UTC)
    with open_session(
        PluginRegistry(), config, resolve_destination(config, "github_events_api")
    ) as s:
        s.ensure_table(table_spec("_dlt_custom_checkpoints"))
        for resource, status, page in (("events", "active", 2), ("users", "completed", 4),
                                       ("events", "completed", 6)):  # fmt: skip
            row = dict.fromkeys(COLUMNS)
            row.update(
                pipeline_name=PIPELINE,
                resource_name=resource,
                run_id="2db0bb0b60653f75",
                checkpoint_value="2026-01-01T05:00:00+00:00",
                page_number=page,
                records_processed=page * 3,
                status=status,
                created_at=now,
                updated_at=now,
            )
            s.execute(statements("_dlt_custom_checkpoints").insert, *row.values())


def test_list_json_is_an_empty_list_without_checkpoints(cli: Any, project: Path) -> None:
    code, out = cli("--root", str(project), "checkpoints", "list", "-p", PIPELINE, "-f", "json")
    assert code == 0
    assert json.loads(out) == []
    code, out = cli("--root", str(project), "checkpoints", "list", "-s", "github_events_api")
    assert (code, out.strip()) == (0, "No checkpoints found")
    assert not (project / f"{PIPELINE}.duckdb").exists()  # a read never creates the database


def test_list_by_source_or_pipeline_and_resource_filter(cli: Any, project: Path) -> None:
    _seed_rows(project)
    code, out = cli("--root", str(project), "checkpoints", "list", "-s", "github_events_api",
                    "--json")  # fmt: skip
    assert code == 0
    assert [r["resource_name"] for r in json.loads(out)] == ["events", "users", "events"]
    code, out = cli("--root", str(project), "checkpoints", "list", "-p", PIPELINE, "-r", "users")
    assert code == 0
    assert out.splitlines()[0] == "Found 1 checkpoint(s):"
    assert out.splitlines()[4].startswith(
        "users                2db0bb0b   2026-01-01T05:00:00+00:00 4        12         completed  "
    )


def test_python_api_cleanup_scopes(project: Path, logs: list) -> None:
    _seed_rows(project)
    result = cleanup_checkpoints(PIPELINE, "events", root=project)
    assert (result.deleted, result.active_kept) == (1, 1)
    assert any("1 active checkpoint(s) kept" in e["event"] for e in logs)
    assert sorted(r["resource_name"] for r in list_checkpoints(PIPELINE, root=project)) == [
        "events",
        "users",
    ]
    result = cleanup_checkpoints(source="github_events_api", include_active=True, root=project)
    assert (result.deleted, result.active_kept) == (2, 0)
    assert list_checkpoints(PIPELINE, root=project) == []


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"pipeline_name": "nope_pipeline"}, UsageError),
        ({"source": "nope"}, UnknownSourceError),
        ({"pipeline_name": "other_pipeline", "source": "github_events_api"}, UsageError),
        ({}, UsageError),
        ({"pipeline_name": PIPELINE, "checkpoint_table": "x; DROP TABLE y"}, IdentifierError),
    ],
)
def test_usage_errors(project: Path, args: dict[str, Any], error: type) -> None:
    with pytest.raises(error) as info:
        list_checkpoints(root=project, **args)
    assert info.value.exit_code == 2


def test_cli_usage_error_exits_2(cli: Any, project: Path) -> None:
    code, out = cli("--root", str(project), "checkpoints", "cleanup", "-p", "nope_pipeline")
    assert code == 2
    assert "github_events_api_pipeline" in out  # the message lists the project's pipelines
