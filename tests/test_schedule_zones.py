"""Schedules in local time (issue 32): cron read in an IANA zone, DST as cron does, on an
injected clock; the zone carried into ``schedule emit`` and the scheduler's due check."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import yaml

from dlt_ops.cron import Cron, cron_of, is_valid_schedule
from dlt_ops.errors import ConfigError

BERLIN = ZoneInfo("Europe/Berlin")
SPRING, FALL = datetime(2026, 3, 29), datetime(2026, 10, 25)  # Berlin's 2026 changes


def _slots_on(cron: Cron, day: datetime) -> list[datetime]:
    """Every distinct slot ``previous`` answers while an injected clock walks ``day`` (local)
    minute by minute: what the scheduler's due check sees, one run per distinct slot."""
    start = day.replace(tzinfo=BERLIN).astimezone(UTC)
    end = (day + timedelta(days=1)).replace(tzinfo=BERLIN).astimezone(UTC)
    seen: list[datetime] = []
    now = start
    while now < end:
        slot = cron.previous(now)
        if slot is not None and slot >= start and slot not in seen:
            seen.append(slot)
        now += timedelta(minutes=1)
    return seen


def _fires_on(cron: Cron, day: datetime) -> list[datetime]:
    """The fire times ``next`` walks through on ``day`` (local)."""
    start = day.replace(tzinfo=BERLIN).astimezone(UTC)
    end = (day + timedelta(days=1)).replace(tzinfo=BERLIN).astimezone(UTC)
    fires, fire = [], cron.next(start - timedelta(minutes=1))
    while fire is not None and fire < end:
        fires.append(fire)
        fire = cron.next(fire)
    return fires


def test_skipped_half_past_two_runs_once_on_spring_forward() -> None:
    cron = cron_of("cron:30 2 * * * Europe/Berlin")
    assert cron is not None
    # 02:30 does not exist that day: it runs once, right after the jump (03:00 CEST = 01:00Z)
    expected = [datetime(2026, 3, 29, 1, 0, tzinfo=UTC)]
    assert _slots_on(cron, SPRING) == expected
    assert _fires_on(cron, SPRING) == expected
    # the days around it fire at 02:30 local as usual
    assert _fires_on(cron, SPRING - timedelta(days=1)) == [datetime(2026, 3, 28, 1, 30, tzinfo=UTC)]
    assert _fires_on(cron, SPRING + timedelta(days=1)) == [datetime(2026, 3, 30, 0, 30, tzinfo=UTC)]


def test_repeated_half_past_two_runs_once_on_fall_back() -> None:
    cron = cron_of("cron:30 2 * * * Europe/Berlin")
    assert cron is not None
    # 02:30 comes twice (CEST, then CET): it runs at the first only
    expected = [datetime(2026, 10, 25, 0, 30, tzinfo=UTC)]
    assert _slots_on(cron, FALL) == expected
    assert _fires_on(cron, FALL) == expected
    assert _fires_on(cron, FALL + timedelta(days=1)) == [datetime(2026, 10, 26, 1, 30, tzinfo=UTC)]


def test_wildcard_hours_follow_the_clock_through_the_repeated_hour() -> None:
    # as cron(8): an entry with '*' in its hour field is not a fixed-time job: it fires in
    # both copies of the repeated hour (25 fires that day)
    cron = cron_of("cron:30 * * * * Europe/Berlin")
    assert cron is not None
    assert len(_fires_on(cron, FALL)) == 25
    assert len(_fires_on(cron, SPRING)) == 23


def test_source_timezone_key_and_inline_zone() -> None:
    winter = datetime(2026, 1, 15, 12, 0, tzinfo=UTC)
    daily = cron_of("@daily", "Europe/Berlin")
    assert daily is not None and daily.previous(winter) == datetime(2026, 1, 14, 23, tzinfo=UTC)
    assert cron_of("cron:0 6 * * *").previous(winter) == datetime(2026, 1, 15, 6, tzinfo=UTC)  # type: ignore[union-attr]
    assert cron_of("cron:0 6 * * * Europe/Berlin", "Europe/Berlin") is not None  # same zone
    with pytest.raises(ConfigError, match="keep one of them"):
        cron_of("cron:0 6 * * * Europe/Berlin", "America/New_York")
    with pytest.raises(ConfigError, match="unknown time zone 'Mars/Olympus'"):
        cron_of("cron:0 6 * * * Mars/Olympus")
    with pytest.raises(ConfigError, match="out of range"):
        cron_of("cron:61 6 * * *")
    with pytest.raises(ConfigError, match="5 fields"):
        cron_of("cron:0 6 * *")
    assert not is_valid_schedule("cron:0 6 * * * Nowhere/Town")


ZONED = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"

[sources.berlin_src.dlt_ops]
schedule = "cron:0 6 * * * Europe/Berlin"

[sources.daily_src.dlt_ops]
schedule = "@daily"
timezone = "America/New_York"

[sources.utc_src.dlt_ops]
schedule = "cron:15 3 * * *"
"""


@pytest.fixture
def zoned(project, templates) -> Path:  # noqa: ANN001
    names = ("berlin_src", "daily_src", "utc_src")
    return project(ZONED, {n: templates["events"] for n in names})


def test_due_check_reads_the_zone(zoned: Path) -> None:
    from dlt_ops.config import load_project_config
    from dlt_ops.destinations import project_registry
    from dlt_ops.scheduler.due import all_due

    config = load_project_config(zoned)
    now = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)  # summer: CEST (+2), EDT (-4)
    found = all_due(project_registry(config), config, ["berlin_src", "daily_src", "utc_src"], now)
    assert [d.slot if d else None for d in found] == [
        datetime(2026, 7, 1, 4, 0, tzinfo=UTC),  # 06:00 in Berlin
        datetime(2026, 7, 1, 4, 0, tzinfo=UTC),  # midnight in New York
        datetime(2026, 7, 1, 3, 15, tzinfo=UTC),
    ]


def test_emit_carries_the_zone(zoned: Path, cli) -> None:  # noqa: ANN001
    proc = cli("schedule", "emit", "--target", "cron", "-o", "-", cwd=zoned)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [line for line in proc.stdout.splitlines()
             if line and not line.startswith(("#", "PATH="))]  # fmt: skip
    # each entry sits under the CRON_TZ of its zone (sources in name order)
    assert [line.split(" ", 5)[:5] if "dlt-ops" in line else line for line in lines] == [
        "CRON_TZ=UTC",
        "CRON_TZ=Europe/Berlin",
        ["0", "6", "*", "*", "*"],
        "CRON_TZ=America/New_York",
        ["0", "0", "*", "*", "*"],
        "CRON_TZ=UTC",
        ["15", "3", "*", "*", "*"],
    ]

    proc = cli("schedule", "emit", "--target", "github-actions", cwd=zoned)
    assert proc.returncode == 0, proc.stderr[-3000:]
    workflow = yaml.safe_load((zoned / ".github/workflows/dlt-ops.yml").read_text())
    # GitHub's cron is UTC only: the UTC hours of both offsets, the job checks the local hour
    # (06:00 Berlin and midnight New York share those UTC hours: one cron, two jobs)
    assert [e["cron"] for e in workflow[True]["schedule"]] == ["0 4,5 * * *", "15 3 * * *"]
    jobs = list(workflow["jobs"].values())
    runs = {job["strategy"]["matrix"]["source"][0]: job["steps"][-1]["run"] for job in jobs}
    assert "TZ=Europe/Berlin date +%H | grep -qxE '06'" in runs["berlin_src"]
    assert "TZ=America/New_York date +%H | grep -qxE '00'" in runs["daily_src"]
    assert runs["utc_src"].startswith("dlt-ops ")  # a UTC schedule runs unguarded


def test_emit_refuses_a_zone_github_cannot_follow(project, templates, cli) -> None:  # noqa: ANN001
    config = '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "ds"\n\n'
    config += '[sources.mumbai_src.dlt_ops]\nschedule = "cron:0 6 * * *"\n'
    config += 'timezone = "Asia/Kolkata"\n'
    root = project(config, {"mumbai_src": templates["events"]})
    proc = cli("schedule", "emit", "--target", "github-actions", cwd=root)
    assert proc.returncode == 2
    assert "mumbai_src" in proc.stderr and "UTC only" in proc.stderr
    assert not (root / ".github").exists()


def test_unknown_timezone_key_is_a_config_error(project, templates, cli) -> None:  # noqa: ANN001
    config = '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "ds"\n\n'
    config += '[sources.a_src.dlt_ops]\nschedule = "@daily"\ntimezone = "Mars/Olympus"\n'
    root = project(config, {"a_src": templates["events"]})
    proc = cli("schedule", "emit", "--target", "cron", "-o", "-", cwd=root)
    assert proc.returncode == 2
    assert "timezone" in proc.stderr and "IANA" in proc.stderr


def test_validate_names_what_is_wrong_with_a_schedule(project, templates, cli) -> None:  # noqa: ANN001
    config = '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "ds"\n\n'
    config += '[sources.a_src.dlt_ops]\nschedule = "cron:61 6 * * *"\n\n'
    config += '[sources.b_src.dlt_ops]\nschedule = "cron:0 6 * * * Mars/Olympus"\n'
    root = project(config, {n: templates["events"] for n in ("a_src", "b_src")})
    proc = cli("pipeline", "validate", cwd=root)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out[-3000:]
    assert "Invalid schedule 'cron:61 6 * * *'" in out and "out of range" in out
    assert "unknown time zone 'Mars/Olympus'" in out


@pytest.mark.parametrize(("hour", "runs"), [("06", True), ("07", False)])
def test_github_local_hour_check_runs_one_of_the_two_fires(
    zoned: Path,
    cli,
    tmp_path: Path,
    hour: str,
    runs: bool,  # noqa: ANN001
) -> None:
    import os
    import subprocess

    proc = cli("schedule", "emit", "--target", "github-actions", cwd=zoned)
    assert proc.returncode == 0, proc.stderr[-3000:]
    workflow = yaml.safe_load((zoned / ".github/workflows/dlt-ops.yml").read_text())
    (step,) = [job["steps"][-1]["run"] for job in workflow["jobs"].values()
               if job["strategy"]["matrix"]["source"] == ["berlin_src"]]  # fmt: skip
    # the step as a runner executes it: GitHub's expressions filled in, a clock that says
    # `hour` in Berlin (a fake `date`), and a `dlt-ops` that only says it ran
    script = step.replace("${{ github.event_name }}", "schedule").replace(
        "${{ matrix.source }}", "berlin_src"
    )
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "date").write_text(f'#!/bin/sh\n[ "$TZ" = Europe/Berlin ] && echo {hour}\n')
    (bin_dir / "dlt-ops").write_text('#!/bin/sh\necho "RAN $*"\n')
    for exe in bin_dir.iterdir():
        exe.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True,
                          check=True)  # fmt: skip
    assert ("RAN --root . pipeline run -s berlin_src" in done.stdout) is runs, done.stdout
    assert ("skipped" in done.stdout) is not runs
