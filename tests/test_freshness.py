"""Freshness SLAs (issue 32): the verdict, ``pipeline status`` and ``--fail-on stale``, and the
scheduler's alerts (once on a miss, not again after a restart, once on recovery), on DuckDB
with ledger rows whose timestamps are moved into the past, alerts received by a real webhook."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from dlt_ops.config import load_project_config
from dlt_ops.ledger.freshness import FreshnessLevel, freshness_of
from dlt_ops.ledger.model import RunRecord
from tests.test_alerts import _Receiver

NOW = datetime(2026, 6, 10, 12, 0, tzinfo=UTC)


def _row(status: str, started: datetime, minutes: int = 5) -> RunRecord:
    return RunRecord(
        pipeline_name="p", source_section="s", resource_name=None, destination="duckdb",
        dataset="ds", run_id=f"r{started.timestamp()}", dlt_run_id=None, backfill_id=None,
        trigger_source="cli", started_at=started,
        completed_at=started + timedelta(minutes=minutes) if status != "running" else None,
        status=status, records_extracted=None, records_loaded=None, error_summary=None,
    )  # fmt: skip


def _config(tmp_path: Path, source_keys: str) -> object:
    (tmp_path / ".dlt").mkdir(exist_ok=True)
    (tmp_path / ".dlt" / "config.toml").write_text(
        f'[dlt_ops]\ndefault_destination = "duckdb"\n\n[sources.s.dlt_ops]\n{source_keys}\n'
    )
    return load_project_config(tmp_path)


def test_levels_from_the_newest_success(tmp_path: Path) -> None:
    config = _config(tmp_path, 'freshness = {warn = "1h", error = "3h"}')
    ok = [_row("completed", NOW - timedelta(minutes=30))]
    warn = [
        _row("failed", NOW - timedelta(minutes=10)),
        _row("completed", NOW - timedelta(hours=2)),
    ]
    error = [_row("completed", NOW - timedelta(hours=4))]
    assert freshness_of(config, "s", ok, NOW).level is FreshnessLevel.ok
    # a failed run is no success: the age runs from the older completed one
    verdict = freshness_of(config, "s", warn, NOW)
    assert verdict.level is FreshnessLevel.warn and verdict.age_s == pytest.approx(6900)
    assert freshness_of(config, "s", error, NOW).stale
    never = freshness_of(config, "s", [_row("failed", NOW)], NOW)
    assert never.stale and "no successful run" in never.describe()
    unset = _config(tmp_path, 'schedule = "@manual"')
    assert freshness_of(unset, "s", error, NOW).level is FreshnessLevel.unset


def test_a_schedule_slot_with_no_run_is_missed(tmp_path: Path) -> None:
    config = _config(tmp_path, 'schedule = "@hourly"')
    # ran at 10:05: the 11:00 slot went by with no run; at 12:00 that is a missed run
    late = freshness_of(config, "s", [_row("completed", NOW - timedelta(minutes=115))], NOW)
    assert late.missed_slot == NOW - timedelta(hours=1)
    # ran at 11:05: the 12:00 slot has only just fired, nothing missed yet
    fine = freshness_of(config, "s", [_row("completed", NOW - timedelta(minutes=55))], NOW)
    assert fine.missed_slot is None


@pytest.mark.parametrize(
    "value", ['"soon"', '"0h"', '{warn = "5h", error = "2h"}', '{later = "1h"}', "26"]
)
def test_a_bad_freshness_is_a_config_error(project, templates, cli, value: str) -> None:  # noqa: ANN001
    config = '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "ds"\n\n'
    config += f'[sources.events_src.dlt_ops]\nschedule = "@manual"\nfreshness = {value}\n'
    root = project(config, {"events_src": templates["events"]})
    proc = cli("pipeline", "status", cwd=root)
    assert proc.returncode == 2
    assert "freshness" in proc.stderr and "warn shorter than error" in proc.stderr


def _age_ledger(root: Path, source: str, hours: int) -> None:
    """Move every ledger row of ``source`` ``hours`` into the past (the injected time)."""
    with duckdb.connect(str(root / f"{source}_pipeline.duckdb")) as con:
        con.execute(
            f"UPDATE ds._dlt_ops_runs SET started_at = started_at - INTERVAL {hours} HOUR, "
            f"completed_at = completed_at - INTERVAL {hours} HOUR"
        )


def _alert_rows(root: Path, source: str) -> list[tuple]:
    with duckdb.connect(str(root / f"{source}_pipeline.duckdb"), read_only=True) as con:
        return con.execute(
            "SELECT problem, level, resolved_at IS NULL FROM ds._dlt_ops_freshness_alerts"
        ).fetchall()


@pytest.fixture
def receiver():  # noqa: ANN201
    with _Receiver([]) as server:
        yield server


def test_stale_source_fails_status_and_alerts_once(project, templates, cli, receiver) -> None:  # noqa: ANN001
    config = '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "ds"\n'
    config += f'alert_sinks = ["webhook"]\n\n[dlt_ops.alert_sink.webhook]\nurl = "{receiver.url}"\n'
    config += '\n[sources.events_src.dlt_ops]\nschedule = "@manual"\nfreshness = "1h"\n'
    config += '\n[sources.other_src.dlt_ops]\nschedule = "@manual"\n'
    root = project(config, {n: templates["events"] for n in ("events_src", "other_src")})
    for source in ("events_src", "other_src"):
        run = cli("pipeline", "run", "-s", source, "-y", cwd=root)
        assert run.returncode == 0, run.stderr[-3000:]
    assert cli("pipeline", "status", "--fail-on", "stale", cwd=root).returncode == 0

    _age_ledger(root, "events_src", 2)  # last success 2 h ago, SLA 1 h
    _age_ledger(root, "other_src", 2)  # no SLA: 2 h is within staleness_days
    proc = cli("pipeline", "status", "--fail-on", "stale", cwd=root)
    assert proc.returncode == 1
    assert "--fail-on stale: tripped by events_src" in proc.stderr
    assert "freshness error: last success 2h" in proc.stdout
    doc = {s["source"]: s for s in json.loads(cli("pipeline", "status", "--json", cwd=root).stdout)}
    assert doc["events_src"]["freshness"]["level"] == "error"
    assert doc["events_src"]["freshness"]["error_after_s"] == 3600
    assert doc["other_src"]["freshness"]["level"] == "unset"
    # the report colours the verdict
    report = cli("report", "-o", str(root / "fleet.html"), cwd=root)
    assert report.returncode == 0, report.stderr[-3000:]
    html = (root / "fleet.html").read_text()
    assert '<tr data-source="events_src" data-freshness="error">' in html
    assert 'class="badge freshness-error"' in html and ".freshness-error{background:" in html
    assert '<tr data-source="other_src" data-freshness="unset">' in html

    # the scheduler alerts the miss once; a restarted scheduler (a new process) does not repeat it
    for _ in range(2):
        proc = cli("scheduler", "run", "--once", cwd=root)
        assert proc.returncode == 0, proc.stderr[-3000:]
    assert [(a["kind"], a["source"]) for a in receiver.bodies] == [
        ("freshness_missed", "events_src")
    ]
    assert "last success 2h" in receiver.bodies[0]["message"]
    assert _alert_rows(root, "events_src") == [("freshness", "error", True)]

    # a fresh run: one recovery alert, then quiet
    assert cli("pipeline", "run", "-s", "events_src", "-y", cwd=root).returncode == 0
    for _ in range(2):
        assert cli("scheduler", "run", "--once", cwd=root).returncode == 0
    assert [a["kind"] for a in receiver.bodies] == ["freshness_missed", "recovered"]
    assert _alert_rows(root, "events_src") == [("freshness", "error", False)]
    assert cli("pipeline", "status", "--fail-on", "stale", cwd=root).returncode == 0


def test_missed_run_alerts_once_across_restarts_and_on_recovery(
    project, templates, cli, receiver
) -> None:  # noqa: ANN001
    from dlt_ops.clock import utcnow
    from dlt_ops.destinations import project_registry
    from dlt_ops.scheduler.freshness_alerts import FreshnessWatch

    config = '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "ds"\n'
    config += f'alert_sinks = ["webhook"]\n\n[dlt_ops.alert_sink.webhook]\nurl = "{receiver.url}"\n'
    config += '\n[sources.events_src.dlt_ops]\nschedule = "@hourly"\n'  # no SLA: missed runs only
    root = project(config, {"events_src": templates["events"]})
    assert cli("pipeline", "run", "-s", "events_src", "-y", cwd=root).returncode == 0
    _age_ledger(root, "events_src", 3)  # the newest run started 3 h ago: two slots went by
    loaded = load_project_config(root)
    registry = project_registry(loaded)

    def check(watch: FreshnessWatch) -> int:  # the scheduler's step after its runs
        return watch.check(registry, loaded, ["events_src"], utcnow())

    first = FreshnessWatch()
    assert check(first) == 1 and check(first) == 0  # one alert, not again next pass
    assert check(FreshnessWatch()) == 0  # a restarted scheduler reads what was sent
    (alert,) = receiver.bodies
    assert alert["kind"] == "run_missed" and "missed the run due at" in alert["message"]
    assert _alert_rows(root, "events_src") == [("missed_run", "missed", True)]

    assert cli("pipeline", "run", "-s", "events_src", "-y", cwd=root).returncode == 0
    assert check(FreshnessWatch()) == 1 and check(first) == 0
    assert [a["kind"] for a in receiver.bodies] == ["run_missed", "recovered"]
    assert _alert_rows(root, "events_src") == [("missed_run", "missed", False)]
