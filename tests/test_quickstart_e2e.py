"""Seed 000 end to end: init the example, run it, read the ledger back from anywhere."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import duckdb

SEED_TYPES = {
    "pipeline_name": str,
    "source_section": str,
    "resource_name": type(None),
    "destination": str,
    "dataset": str,
    "run_id": str,
    "dlt_run_id": str,
    "backfill_id": type(None),
    "trigger_source": str,
    "started_at": str,
    "completed_at": str,
    "status": str,
    "records_extracted": int,
    "records_loaded": int,
    "error_summary": type(None),
}


def _status(cli, cwd: Path, *extra: str) -> list[dict]:  # noqa: ANN001
    proc = cli("pipeline", "status", "--json", *extra, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_example_run_lands_one_completed_row_visible_from_anywhere(tmp_path: Path, cli) -> None:  # noqa: ANN001
    init = cli("init", "demo", "--example", cwd=tmp_path)
    assert init.returncode == 0, init.stderr
    demo = tmp_path / "demo"
    assert _status(cli, demo)[0]["ledger"] == "missing"

    run = cli("pipeline", "run", "-s", "demo_events", "-y", cwd=demo)
    assert run.returncode == 0, run.stderr
    assert "completed: 6 record(s) loaded" in run.stdout
    assert "Dataset: demo_data\n  Capabilities: full" in run.stderr

    doc = _status(cli, demo)
    assert [s["source"] for s in doc] == ["demo_events"]
    state = doc[0]
    assert state["ledger"] == "ok" and state["error"] is None
    (row,) = state["runs"]
    for key, kind in SEED_TYPES.items():
        assert isinstance(row[key], kind), f"{key}: {row[key]!r} is not {kind.__name__}"
    assert row["status"] == "completed" and row["records_loaded"] == 6
    assert row["pipeline_name"] == "demo_events_pipeline" and row["dataset"] == "demo_data"
    assert len(row["run_id"]) == 32 and row["trigger_source"] == "cli"
    assert datetime.fromisoformat(row["started_at"]).tzinfo is not None

    sub = demo / "my_pipeline"
    assert _status(cli, sub) == doc
    assert _status(cli, tmp_path, "--root", str(demo))[0]["runs"] == doc[0]["runs"]
    rooted = cli("--root", str(demo), "pipeline", "status", "--json", cwd=tmp_path)
    assert json.loads(rooted.stdout) == doc

    text = cli("pipeline", "status", cwd=demo).stdout
    assert text.splitlines()[0] == "Source: demo_events"
    assert text.splitlines()[1].startswith("  schedule @daily: last slot ")
    assert text.splitlines()[2].split() == [
        "Status",
        "Started",
        "Completed",
        "Records",
        "Trigger",
        "Resource",
        "Run",
        "ID",
    ]
    assert row["run_id"][:12] in text

    with duckdb.connect(str(demo / "demo_events_pipeline.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM demo_data.events").fetchone() == (6,)
        assert con.execute("SELECT count(*) FROM demo_data._dlt_ops_runs").fetchone() == (1,)


def test_sibling_projects_never_share_state_or_files(tmp_path: Path, cli) -> None:  # noqa: ANN001
    for name in ("one", "two"):
        assert cli("init", name, "--example", cwd=tmp_path).returncode == 0
    for name in ("one", "two"):
        run = cli("pipeline", "run", "-s", "demo_events", "-y", cwd=tmp_path / name)
        assert run.returncode == 0, run.stderr
    run_ids = {}
    for name in ("one", "two"):
        root = tmp_path / name
        working = root / ".dlt-ops" / "pipelines" / "duckdb" / "demo_data"
        assert (working / "demo_events_pipeline").is_dir()
        with duckdb.connect(str(root / "demo_events_pipeline.duckdb"), read_only=True) as con:
            assert con.execute("SELECT count(*) FROM demo_data.events").fetchone() == (6,)
            rows = con.execute("SELECT run_id FROM demo_data._dlt_ops_runs").fetchall()
        assert len(rows) == 1
        run_ids[name] = rows[0][0]
    assert run_ids["one"] != run_ids["two"]
    assert not list(tmp_path.glob("*.duckdb"))
