"""The built-in scheduler and ``schedule emit`` (issue 13): real CLI, real ledger (DuckDB)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest
import yaml

from dlt_ops.cron import Cron, cron_text, is_valid_schedule

CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"

[sources.hourly_src.dlt_ops]
schedule = "@hourly"

[sources.manual_src.dlt_ops]
schedule = "@manual"

[sources.nightly_src.dlt_ops]
schedule = "cron:15 3 * * *"
"""


def _ledger(root: Path, source: str) -> list[tuple]:
    path = root / f"{source}_pipeline.duckdb"
    if not path.exists():
        return []
    with duckdb.connect(str(path), read_only=True) as con:
        return con.execute(
            "SELECT source_section, trigger_source, status FROM ds._dlt_ops_runs"
        ).fetchall()


@pytest.fixture
def scheduled(project, templates) -> Path:  # noqa: ANN001
    return project(CONFIG, {n: templates["events"] for n in ("hourly_src", "manual_src",
                                                              "nightly_src")})  # fmt: skip


def _pass(root: Path, now: datetime, *, windowed: bool = False) -> list:
    """One ``scheduler run --once`` pass in-process, at the injected ``now`` (the due logic
    reads no clock of its own: the test decides which slot has fired)."""
    from dlt_ops.config import load_project_config
    from dlt_ops.destinations import project_registry
    from dlt_ops.scheduler.service import run_due

    config = load_project_config(root)
    return run_due(project_registry(config), config, now=now, windowed=windowed)


def test_once_runs_what_is_due_and_then_nothing(scheduled: Path, cli) -> None:  # noqa: ANN001
    # a nightly source that ran after its last slot is not due; plant that run first
    first = cli("pipeline", "run", "-s", "nightly_src", "-y", cwd=scheduled)
    assert first.returncode == 0, first.stderr[-3000:]
    # a second into the current hour (hourly's runs start at the wall clock, so the injected
    # now follows it); the planted nightly run is moved past both passes below, so nightly has
    # run after every slot they see whatever the hour (its 03:15 slot may fall between them)
    now = datetime.now(UTC).replace(minute=0, second=1, microsecond=0)
    planted = now + timedelta(hours=2)
    with duckdb.connect(str(scheduled / "nightly_src_pipeline.duckdb")) as con:
        con.execute("UPDATE ds._dlt_ops_runs SET started_at = ?, completed_at = ?, "
                    "heartbeat_at = ?", [planted, planted, planted])  # fmt: skip
    ticks = _pass(scheduled, now)
    assert [(t.source, t.status, t.slot) for t in ticks] == [
        ("hourly_src", "completed", now.replace(second=0))
    ]
    assert _ledger(scheduled, "hourly_src") == [("hourly_src", "y-scheduler", "completed")]
    assert _ledger(scheduled, "manual_src") == []
    assert _pass(scheduled, now) == []  # the same instant again: nothing due
    assert len(_ledger(scheduled, "hourly_src")) == 1
    # the next slot fires: hourly is due again, nightly still is not
    later = _pass(scheduled, now + timedelta(hours=1))
    assert [(t.source, t.status) for t in later] == [("hourly_src", "completed")]
    assert len(_ledger(scheduled, "hourly_src")) == 2


def test_once_prints_nothing_due(scheduled: Path, cli) -> None:  # noqa: ANN001
    # the CLI's own pass on the wall clock, where no answer depends on it: @manual never fires
    manual_only = '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "ds"\n\n'
    manual_only += '[sources.manual_src.dlt_ops]\nschedule = "@manual"\n'
    (scheduled / ".dlt" / "config.toml").write_text(manual_only)
    proc = cli("scheduler", "run", "--once", cwd=scheduled)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "nothing due."
    assert _ledger(scheduled, "manual_src") == []


def test_windowed_runs_close_their_slot(scheduled: Path) -> None:
    now = datetime(2026, 3, 4, 10, 37, 12, tzinfo=UTC)  # injected: slot 10:00 fired
    ticks = _pass(scheduled, now, windowed=True)
    assert {t.source: t.status for t in ticks} == {
        "hourly_src": "completed",
        "nightly_src": "completed",
    }
    with duckdb.connect(str(scheduled / "hourly_src_pipeline.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT window_from, window_to, status FROM ds._dlt_ops_runs").fetchall()
    ((start, end, status),) = rows
    assert status == "completed"
    assert end.astimezone(UTC) == datetime(2026, 3, 4, 10, 0, tzinfo=UTC)
    assert start.astimezone(UTC) == datetime(2026, 3, 4, 9, 0, tzinfo=UTC)


def test_emit_cron_and_github_actions(scheduled: Path, cli) -> None:  # noqa: ANN001
    proc = cli("schedule", "emit", "--target", "cron", "-o", "-", cwd=scheduled)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [line for line in proc.stdout.splitlines() if not line.startswith("#")]
    assert any(line.startswith("0 * * * * ") and "-s hourly_src" in line for line in lines)
    assert any(line.startswith("15 3 * * * ") and "-s nightly_src" in line for line in lines)
    assert all("--trigger-source cron" in line for line in lines if "dlt-ops" in line)
    assert "manual_src" not in proc.stdout

    proc = cli("schedule", "emit", "--target", "github-actions", cwd=scheduled)
    assert proc.returncode == 0, proc.stderr[-3000:]
    workflow = yaml.safe_load((scheduled / ".github/workflows/dlt-ops.yml").read_text())
    crons = [entry["cron"] for entry in workflow[True]["schedule"]]  # YAML 1.1 reads on: as True
    assert crons == ["0 * * * *", "15 3 * * *"]
    jobs = workflow["jobs"]
    sources = sorted(s for job in jobs.values() for s in job["strategy"]["matrix"]["source"])
    assert sources == ["hourly_src", "nightly_src"]
    for job in jobs.values():
        assert job["concurrency"]["group"] == "dlt-ops-${{ matrix.source }}"
        assert "--trigger-source github-actions" in job["steps"][-1]["run"]

    refused = cli("schedule", "emit", "--target", "cli", cwd=scheduled)
    assert refused.returncode == 2 and "writes no schedule files" in refused.stderr


def test_cron_evaluation() -> None:
    now = datetime(2026, 3, 4, 10, 37, 12, tzinfo=UTC)  # a Wednesday
    assert Cron.parse("0 * * * *").previous(now) == datetime(2026, 3, 4, 10, 0, tzinfo=UTC)
    assert Cron.parse("0 */2 * * *").previous(now) == datetime(2026, 3, 4, 10, 0, tzinfo=UTC)
    assert Cron.parse("0 0 * * 1").previous(now) == datetime(2026, 3, 2, 0, 0, tzinfo=UTC)
    assert Cron.parse("0 0 1 * *").previous(now) == datetime(2026, 3, 1, 0, 0, tzinfo=UTC)
    assert Cron.parse("15 3 * * *").next(now) == datetime(2026, 3, 5, 3, 15, tzinfo=UTC)
    assert Cron.parse("0 0 29 2 *").previous(now) == datetime(2024, 2, 29, 0, 0, tzinfo=UTC)
    assert cron_text("@manual") is None
    assert is_valid_schedule("cron:*/5 * * * *")
    assert not is_valid_schedule("cron:61 * * * *")
    assert not is_valid_schedule("@fortnightly")


def test_two_schedulers_run_a_source_once(project, tmp_path: Path) -> None:  # noqa: ANN001
    import os
    import subprocess
    import sys
    import time

    from tests.conftest import CLI
    from tests.test_run_lease import HELD_SOURCE

    config = '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "ds"\n\n'
    config += '[sources.held.dlt_ops]\nschedule = "@hourly"\n'
    root = project(config, {"held": HELD_SOURCE})
    started, release = tmp_path / "started", tmp_path / "release"
    env = {**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false", "HELD_STARTED": str(started),
           "HELD_RELEASE": str(release)}  # fmt: skip

    def scheduler() -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-c", CLI, "scheduler", "run", "--once", "--json"],
                                cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)  # fmt: skip

    first = scheduler()
    deadline = time.monotonic() + 90
    while not started.exists():  # polls the file the source writes, with a deadline
        assert first.poll() is None and time.monotonic() < deadline, first.communicate()[1][-3000:]
        time.sleep(0.05)
    second = scheduler()
    out2, err2 = second.communicate(timeout=180)  # the source is held: it must not run it
    release.write_text("go")
    out1, err1 = first.communicate(timeout=180)
    # no clock in the outcome: the second pass runs while the first holds the source, so it
    # runs nothing whether or not an hourly slot fired meanwhile
    assert first.returncode == 0 and second.returncode == 0, err1[-3000:] + err2[-3000:]
    assert [t["status"] for t in json.loads(out1)] == ["completed"]
    assert all(t["status"] is None for t in json.loads(out2)), out2
    assert _ledger(root, "held") == [("held", "y-scheduler", "completed")]
