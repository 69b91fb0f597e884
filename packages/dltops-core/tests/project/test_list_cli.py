"""``pipeline list`` / ``pipeline resources``: text, JSON, filters, errors."""

from __future__ import annotations

import json
from pathlib import Path

from dlt_ops.project.scaffold import init_project


def _project(tmp_path: Path) -> Path:
    init_project(tmp_path, example=True)
    return tmp_path


def test_list_text(cli, tmp_path: Path) -> None:
    root = _project(tmp_path)
    result = cli(*["--root", str(root), "pipeline", "list"])
    assert result.exit_code == 0
    assert "demo_events" in result.stdout and "@daily" in result.stdout


def test_list_json_applies_schedule_filter(cli, tmp_path: Path) -> None:
    root = _project(tmp_path)
    out = cli(*["--root", str(root), "pipeline", "list", "--json"])
    rows = json.loads(out.stdout)
    assert rows[0]["name"] == "demo_events" and rows[0]["resources"] == ["events"]
    daily = cli(*["--root", str(root), "pipeline", "list", "--json", "-s", "@daily"])
    hourly = cli(*["--root", str(root), "pipeline", "list", "--json", "-s", "@hourly"])
    assert len(json.loads(daily.stdout)) == 1
    assert json.loads(hourly.stdout) == []


def test_list_invalid_schedule_is_usage_error(cli, tmp_path: Path) -> None:
    root = _project(tmp_path)
    result = cli(*["--root", str(root), "pipeline", "list", "-s", "@yearly"])
    assert result.exit_code == 2


def test_resources(cli, tmp_path: Path) -> None:
    root = _project(tmp_path)
    ok = cli(*["--root", str(root), "pipeline", "resources", "-s", "demo_events"])
    assert "• events" in ok.stdout
    js = cli(*["--root", str(root), "pipeline", "resources", "-s", "demo_events", "--json"])
    assert json.loads(js.stdout) == ["events"]
    bad = cli(*["--root", str(root), "pipeline", "resources", "-s", "nope", "--json"])
    assert bad.exit_code == 2
    assert json.loads(bad.stdout)["available_sources"] == ["demo_events"]
