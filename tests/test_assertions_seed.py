"""Seed 000's status example: min_rows_per_load = 10 on the 6-row example fails the run."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import duckdb

MESSAGE = (
    "AssertionFailedError: assertion 'min_rows_per_load' failed on demo_events.events: "
    "row count 6 is below min_rows_per_load 10"
)


def test_seed_status_example_reproduces(tmp_path: Path, cli) -> None:  # noqa: ANN001
    assert cli("init", "demo", "--example", cwd=tmp_path).returncode == 0
    demo = tmp_path / "demo"
    assert cli("pipeline", "run", "-s", "demo_events", "-y", cwd=demo).returncode == 0
    with (demo / ".dlt" / "config.toml").open("a") as f:
        f.write("\n[sources.demo_events.dlt_ops.assertions.events]\nmin_rows_per_load = 10\n")
    run = cli("pipeline", "run", "-s", "demo_events", "-y", cwd=demo)
    assert run.returncode == 1 and "Traceback" not in run.stderr

    lines = cli("pipeline", "status", cwd=demo).stdout.splitlines()
    assert lines[1].startswith("  schedule @daily: ")  # then the table, as seed 002 shows it
    del lines[1]
    assert lines[2].split()[0] == "failed"
    assert lines[3] == f"    ✗ {MESSAGE}"
    assert lines[4].split()[0] == "completed"
    (state,) = json.loads(cli("pipeline", "status", "--json", cwd=demo).stdout)
    failed, completed = state["runs"]
    assert failed["status"] == "failed" and failed["error_summary"] == MESSAGE
    assert failed["records_loaded"] is None and completed["records_loaded"] == 6
    with duckdb.connect(str(demo / "demo_events_pipeline.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM demo_data.events").fetchone() == (6,)

    # --since keeps runs started at or after the bound; a naive bound is a usage error
    newest = datetime.fromisoformat(failed["started_at"])
    (since,) = json.loads(
        cli("pipeline", "status", "--json", "--since", newest.isoformat(), cwd=demo).stdout
    )
    assert [r["run_id"] for r in since["runs"]] == [failed["run_id"]]
    naive = cli("pipeline", "status", "--since", "2026-01-01T00:00:00", cwd=demo)
    assert naive.returncode == 2 and "timezone-naive" in naive.stderr
