"""Seed 001 end to end: the example project through the real CLI, on DuckDB and PostgreSQL.

20 rows, 3 per page, frequency 2. A run that dies after page 3 leaves one active checkpoint
(page 2, 05:00); the re-run resumes from it and loads exactly the 15 rows from 05:00 on; the
ledger keeps both outcomes; ``checkpoints list|cleanup`` read and prune the table.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "checkpoints_demo"
SOURCE = "github_events_api"
PIPELINE = "github_events_api_pipeline"
DATASET = "github_events_raw"
DLT_OPS = str(Path(sys.executable).parent / "dlt-ops")


class Project:
    """A copy of the example project, its environment, and a way to query its destination."""

    def __init__(self, root: Path, env: dict[str, str], query: Callable[[str], list]) -> None:
        self.root, self.env, self.query = root, env, query

    def cli(self, *args: str, fail_after: int | None = None) -> subprocess.CompletedProcess:
        env = dict(self.env)
        if fail_after:
            env["GITHUB_EVENTS_FAIL_AFTER_PAGE"] = str(fail_after)
        return subprocess.run(
            [DLT_OPS, "--root", str(self.root), "--log-format", "json", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
            check=False,
        )

    def run(self, fail_after: int | None = None) -> subprocess.CompletedProcess:
        return self.cli("pipeline", "run", "-s", SOURCE, "-y", "--json", fail_after=fail_after)

    def checkpoints(self) -> list[dict[str, Any]]:
        done = self.cli("checkpoints", "list", "--pipeline", PIPELINE, "--format", "json")
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)


def _events(stderr: str) -> list[str]:
    out = []
    for line in stderr.splitlines():
        try:
            out.append(json.loads(line)["event"])
        except (ValueError, KeyError, TypeError):
            continue
    return out


def _copy(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    root = tmp_path / "project"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".dlt-ops", "*.duckdb*"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DESTINATION__", "GITHUB_"))}
    env.update(RUNTIME__DLTHUB_TELEMETRY="false", DLT_DATA_DIR=str(tmp_path / "dlt-data"))
    return root, env


@pytest.fixture(params=["duckdb", "postgres"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Project:
    root, env = _copy(tmp_path)
    if request.param == "duckdb":
        import duckdb

        def query(sql: str) -> list:
            with duckdb.connect(str(root / f"{PIPELINE}.duckdb"), read_only=True) as conn:
                return conn.execute(sql).fetchall()

        return Project(root, env, query)
    import psycopg

    db = request.getfixturevalue("postgres_database")
    config = root / ".dlt" / "config.toml"
    config.write_text(
        config.read_text().replace(
            'schedule = "@hourly"', 'schedule = "@hourly"\ndestination = "postgres"'
        )  # fmt: skip
    )
    env["DESTINATION__POSTGRES__CREDENTIALS"] = db.dlt_url

    def pg_query(sql: str) -> list:
        with psycopg.connect(db.url, autocommit=True) as conn:
            return conn.execute(sql).fetchall()

    return Project(root, env, pg_query)


def test_seed_scenario(project: Project) -> None:
    failed = project.run(fail_after=3)
    assert failed.returncode == 1, failed.stderr
    events = _events(failed.stderr)
    assert "[events] Run isolation: value=2026-01-01T00:00:00+00:00, run_id=2db0bb0b60653f75" in (
        events
    )
    assert "[events] Checkpoint saved: page 2, 6 records, value: 2026-01-01T05:00:00+00:00" in (
        events
    )
    assert "injected API failure after page 3 (GITHUB_EVENTS_FAIL_AFTER_PAGE)" in failed.stderr
    failed_run = json.loads(failed.stdout)
    assert failed_run["status"] == "failed"

    # between the runs: one active checkpoint at page 2, written by the failed run
    rows = project.checkpoints()
    assert [
        (r["resource_name"], r["run_id"], r["checkpoint_value"], r["page_number"],
         r["records_processed"], r["status"], r["ledger_run_id"])
        for r in rows
    ] == [("events", "2db0bb0b60653f75", "2026-01-01T05:00:00+00:00", 2, 6, "active",
           failed_run["run_id"])]  # fmt: skip
    text = project.cli("checkpoints", "list", "--pipeline", PIPELINE)
    assert text.returncode == 0
    assert text.stdout.startswith("Found 1 checkpoint(s):\n\nResource             RunID")
    assert (
        "events               2db0bb0b   2026-01-01T05:00:00+00:00 2        6          active"
        in (text.stdout)
    )

    resumed = project.run()
    assert resumed.returncode == 0, resumed.stderr
    events = _events(resumed.stderr)
    for line in (
        "[events] Resuming from checkpoint: 2026-01-01T05:00:00+00:00 "
        "(adjusted: 2026-01-01 04:59:59+00:00)",
        "[events] Checkpoint saved: page 2, 6 records, value: 2026-01-01T10:00:00+00:00",
        "[events] Checkpoint saved: page 4, 12 records, value: 2026-01-01T16:00:00+00:00",
        "[events] Checkpoints marked as completed",
        "[events] Cleaned up checkpoints older than 7 days",
    ):
        assert line in events
    completed_run = json.loads(resumed.stdout)
    assert completed_run["status"] == "completed"
    assert completed_run["records_loaded"] == 15

    # exactly the 15 rows from the checkpoint on; the 5 rows below it were never loaded
    loaded = project.query(f"SELECT id FROM {DATASET}.events ORDER BY id")
    assert [r[0] for r in loaded] == list(range(6, 21))

    # the ledger keeps both outcomes, newest first
    status = project.cli("pipeline", "status", "-s", SOURCE, "--json")
    assert status.returncode == 0, status.stderr
    runs = json.loads(status.stdout)[0]["runs"]
    assert [(r["run_id"], r["status"], r["records_loaded"]) for r in runs] == [
        (completed_run["run_id"], "completed", 15),
        (failed_run["run_id"], "failed", None),
    ]

    # every row completed, each carrying the ledger run id of the run that wrote it
    rows = project.checkpoints()
    assert {(r["checkpoint_value"], r["status"], r["ledger_run_id"]) for r in rows} == {
        ("2026-01-01T05:00:00+00:00", "completed", failed_run["run_id"]),
        ("2026-01-01T10:00:00+00:00", "completed", completed_run["run_id"]),
        ("2026-01-01T16:00:00+00:00", "completed", completed_run["run_id"]),
    }


def test_cleanup_keeps_active_rows_unless_asked(project: Project) -> None:
    assert project.run().returncode == 0  # 7 pages at frequency 2: three completed rows
    assert len(project.checkpoints()) == 3
    _activate_newest(project)  # as a later failed run would leave it
    plain = project.cli("checkpoints", "cleanup", "--source", SOURCE)
    assert plain.returncode == 0, plain.stderr
    assert f"✓ Cleaned up checkpoints for pipeline '{PIPELINE}'" in plain.stdout
    assert "deleted 2 row(s); 1 active row(s) kept" in plain.stdout
    warnings = [json.loads(ln) for ln in plain.stderr.splitlines() if '"level": "warning"' in ln]
    assert [w.get("active") for w in warnings] == [1], plain.stderr
    assert [r["status"] for r in project.checkpoints()] == ["active"]
    other = project.cli("checkpoints", "cleanup", "-p", PIPELINE, "-r", "users",
                        "--include-active")  # fmt: skip
    assert other.returncode == 0
    assert len(project.checkpoints()) == 1  # another resource's scope: untouched
    forced = project.cli("checkpoints", "cleanup", "-p", PIPELINE, "--include-active")
    assert forced.returncode == 0
    assert project.checkpoints() == []
    empty = project.cli("checkpoints", "list", "-p", PIPELINE)
    assert empty.stdout.strip() == "No checkpoints found"


def _activate_newest(project: Project) -> None:
    """Turn the newest completed row back into an active one (as a failed run leaves it)."""
    rows = project.checkpoints()
    newest = rows[0]
    sql = (
        f"UPDATE {DATASET}._dlt_custom_checkpoints SET status = 'active' WHERE checkpoint_value = "
        f"'{newest['checkpoint_value']}'"
    )
    if "DESTINATION__POSTGRES__CREDENTIALS" in project.env:
        import psycopg

        with psycopg.connect(project.env["DESTINATION__POSTGRES__CREDENTIALS"]) as conn:
            conn.execute(sql)
    else:
        import duckdb

        with duckdb.connect(str(project.root / f"{PIPELINE}.duckdb")) as conn:
            conn.execute(sql)


def _core_tier(tmp_path: Path) -> Project:
    root, env = _copy(tmp_path)
    config = root / ".dlt" / "config.toml"
    config.write_text(
        config.read_text().replace(
            'default_destination = "duckdb"', 'default_destination = "filesystem"'
        )  # fmt: skip
    )
    env["DESTINATION__FILESYSTEM__BUCKET_URL"] = (tmp_path / "bucket").as_uri()
    return Project(root, env, lambda sql: [])


def test_core_tier_destination_is_refused_before_extract(tmp_path: Path) -> None:
    project = _core_tier(tmp_path)
    done = project.run()
    assert done.returncode == 1
    assert (
        "destination 'filesystem' has no registered DestinationAdapter (core tier), but this "
        "run engages adapter-gated feature(s): checkpoints. Features gated on an adapter: "
        "runs ledger and status, checkpoints, backfill, clean (remote), reconcile, "
        "assertion quarantine. Registered adapters: "
    ) in done.stderr
    assert "DestinationCapabilityError" in done.stderr
    assert not any("Run isolation" in e for e in _events(done.stderr))  # nothing extracted
    assert not (tmp_path / "bucket").exists()
    validate = project.cli("pipeline", "validate")
    assert validate.returncode == 1
    assert "engages adapter-gated feature(s): checkpoints" in validate.stdout + validate.stderr


def test_aliased_decorator_slips_past_static_detection_but_hits_the_backstop(
    tmp_path: Path,
) -> None:
    project = _core_tier(tmp_path)
    module = project.root / "github" / "resource" / "events.py"
    module.write_text(
        module.read_text()
        .replace(
            "from dlt_ops import with_checkpoints", "from dlt_ops import with_checkpoints as keep"
        )
        .replace("@with_checkpoints(", "@keep(")
    )
    done = project.run()
    assert done.returncode == 1
    assert "DestinationCapabilityError" not in done.stderr  # static detection missed it ...
    assert (  # ... and the manager refused on first touch, before any page
        "pipeline 'github_events_api_pipeline': destination 'filesystem' has no registered "
        "DestinationAdapter (core tier), but checkpoints (@with_checkpoints) needs one"
    ) in done.stderr
    assert not any("Checkpoint saved" in e for e in _events(done.stderr))


def _receipt(project: Project, run_id: str) -> dict[str, Any]:
    shown = project.cli("runs", "show", run_id, "--json")
    assert shown.returncode == 0, shown.stderr
    (row,) = json.loads(shown.stdout)["receipt"]
    parts = row["filtered"] + row["rejected"] + row["failed"] + row["records_out"]
    assert row["records_in"] == parts, f"receipt does not reconcile: {row}"
    return row


def test_receipts_reconcile_across_failure_and_resume(project: Project) -> None:
    failed = json.loads(project.run(fail_after=3).stdout)
    row = _receipt(project, failed["run_id"])
    # three pages of three rows came in before the injected failure; nothing reached the load
    assert (row["records_in"], row["pages"], row["records_out"], row["rows_loaded"]) == (
        9, 3, 0, 0,
    )  # fmt: skip
    assert row["failed"] == 9 and "injected API failure" in row["failure_reason"]

    resumed = json.loads(project.run().stdout)
    row = _receipt(project, resumed["run_id"])
    assert row["records_out"] == row["rows_loaded"] == 15
    landed = project.query(f"SELECT count(*) FROM {DATASET}.events")[0][0]
    assert landed == row["rows_loaded"]
