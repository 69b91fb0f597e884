"""Ledger sinks: best-effort isolation, the jsonl sink, core tier, and retention."""

from __future__ import annotations

import json
import types
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
from structlog.testing import capture_logs

from dlt_ops import hookimpl
from dlt_ops.config import load_project_config
from dlt_ops.plugins import PluginRegistry
from dlt_ops.runner.run import RunRequest, execute_run

CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"
ledger_sinks = [{sinks}]

[dlt_ops.ledger_sink.jsonl]
path = "ledger/runs.jsonl"

[sources.events_src.dlt_ops]
schedule = "@daily"
{source_extra}
"""


def _boom_plugin() -> types.ModuleType:
    class BoomSink:
        target = "the void"

        def __init__(self, context: object) -> None:
            pass

        def start(self, run: object) -> None:
            raise RuntimeError("boom at start")

        heartbeat = finish = start

    mod = types.ModuleType("boom_sink_plugin")

    @hookimpl
    def dlt_ops_register_ledger_sinks(register):  # noqa: ANN001, ANN202
        register(BoomSink, name="boom")

    mod.dlt_ops_register_ledger_sinks = dlt_ops_register_ledger_sinks
    return mod


def _jsonl(root: Path) -> list[dict]:
    lines = (root / "ledger" / "runs.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_a_raising_sink_never_affects_other_sinks_or_the_run(project, templates) -> None:  # noqa: ANN001
    root = project(
        CONFIG.format(sinks='"boom", "destination", "jsonl"', source_extra=""),
        {"events_src": templates["events"]},
    )
    registry = PluginRegistry()
    registry.add_plugin(_boom_plugin(), name="boom", kind="ledger_sink")
    with capture_logs() as logs:
        outcome = execute_run(registry, load_project_config(root), RunRequest("events_src"))
    assert outcome.ok and outcome.record.records_loaded == 6
    errors = [e["event"] for e in logs if e["log_level"] == "error"]
    assert "Failed to write run-start row to the void (non-fatal, run continues)" in errors
    assert "Failed to write run-end row to the void (non-fatal, run continues)" in errors
    with duckdb.connect(str(root / "events_src_pipeline.duckdb"), read_only=True) as con:
        assert con.execute("SELECT status FROM ds._dlt_ops_runs").fetchall() == [("completed",)]
    events = [(e["event"], e["status"]) for e in _jsonl(root) if e["event"] != "receipt"]
    assert events[0] == ("start", "running") and events[-1] == ("finish", "completed")


def test_core_tier_keeps_a_readable_ledger_through_jsonl(project, templates, cli, tmp_path) -> None:  # noqa: ANN001
    lake = tmp_path / "lake"
    root = project(
        CONFIG.format(sinks='"destination", "jsonl"', source_extra='destination = "filesystem"')
        + f'\n[destination.filesystem]\nbucket_url = "{lake.as_uri()}"\n',
        {"events_src": templates["events"]},
    )
    run = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    assert run.returncode == 0, run.stderr
    assert "runs ledger skipped: destination 'filesystem' has no DestinationAdapter" in run.stderr
    assert "Capabilities: core (no adapter: runs ledger and status, checkpoints" in run.stderr
    assert any(lake.rglob("*.jsonl*")) or any(lake.rglob("*.parquet"))
    status = json.loads(cli("pipeline", "status", "--json", cwd=root).stdout)[0]
    assert status["ledger"] == "ok"
    assert [r["status"] for r in status["runs"]] == ["completed"]
    assert status["runs"][0]["records_loaded"] == 6
    shown = json.loads(cli("runs", "show", "last", "--json", cwd=root).stdout)
    (receipt,) = shown["receipt"]  # read back from the jsonl file: no SQL engine involved
    assert (receipt["records_in"], receipt["records_out"]) == (6, 6)
    assert shown["run"]["run_id"] == status["runs"][0]["run_id"]


def test_prune_trims_old_runs_in_every_ledger(project, templates, cli) -> None:  # noqa: ANN001
    root = project(
        CONFIG.format(sinks='"destination", "jsonl"', source_extra=""),
        {"events_src": templates["events"]},
    )
    assert cli("pipeline", "run", "-s", "events_src", "-y", cwd=root).returncode == 0
    old = datetime.now(UTC) - timedelta(days=120)
    with duckdb.connect(str(root / "events_src_pipeline.duckdb")) as con:
        con.execute(
            "INSERT INTO ds._dlt_ops_runs (pipeline_name, source_section, destination, dataset, "
            "run_id, trigger_source, started_at, status) VALUES "
            "('events_src_pipeline', 'events_src', 'duckdb', 'ds', 'old', 'cli', ?, 'completed')",
            [old],
        )
    dry = cli("runs", "prune", "--older-than", "90d", "--dry-run", cwd=root)
    assert dry.returncode == 0 and "would delete 1 run(s) older than 90d" in dry.stdout
    real = cli("runs", "prune", "--older-than", "90d", cwd=root)
    assert "destination: duckdb/ds: deleted 1 run(s)" in real.stdout
    assert "deleted 0 run(s)" in real.stdout  # the jsonl ledger had nothing that old
    status = json.loads(cli("pipeline", "status", "--json", cwd=root).stdout)[0]
    assert [r["run_id"] for r in status["runs"]] != ["old"] and len(status["runs"]) == 1
    bad = cli("runs", "prune", "--older-than", "3w", cwd=root)
    assert bad.returncode == 2 and "simple <N>d / <N>h / <N>m" in bad.stderr


def _core_tier_project(project, templates, tmp_path: Path, sinks: str) -> Path:  # noqa: ANN001
    lake = tmp_path / "lake"
    return project(
        CONFIG.format(sinks=sinks, source_extra='destination = "filesystem"')
        + f'\n[destination.filesystem]\nbucket_url = "{lake.as_uri()}"\n',
        {"events_src": templates["events"]},
    )


def test_a_healthy_core_tier_run_logs_no_error(project, templates, cli, tmp_path) -> None:  # noqa: ANN001
    root = _core_tier_project(project, templates, tmp_path, '"destination", "jsonl"')
    for _ in range(2):  # the second run looks for abandoned rows of the first
        run = cli("--log-format", "json", "pipeline", "run", "-s", "events_src", "-y", cwd=root)
        assert run.returncode == 0, run.stderr[-3000:]
        levels = [json.loads(line).get("level") for line in run.stderr.splitlines()
                  if line.startswith("{")]  # fmt: skip
        assert levels and "error" not in levels, run.stderr[-3000:]


def test_a_run_that_keeps_no_receipt_says_so(project, templates, cli, tmp_path) -> None:  # noqa: ANN001
    root = _core_tier_project(project, templates, tmp_path, '"destination"')
    run = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "receipt not kept" in run.stderr and "jsonl" in run.stderr
