"""``dlt-ops migrate`` adopts a project and a PostgreSQL dataset that dlt-ops 0.1 itself wrote
(the 0.1.0 wheel, in its own virtualenv): its runs, a half-done backfill and an active
checkpoint survive the switch."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli

HERE = Path(__file__).parent
WINDOW = ("--from", "2026-01-01T00:00:00Z", "--to", "2026-01-05T00:00:00Z", "--chunk", "1d")
CONFIG = """
[dlt_ops]
default_destination = "postgres"
default_dataset = "raw"

[dlt_ops.plugins.assertion]
# a pick table under 0.1's axis name

[sources.feed]

[sources.feed.dlt_ops]
schedule = "@daily"
"""


@pytest.fixture
def project_0_1(tmp_path: Path, postgres_database: Any) -> tuple[Path, dict[str, str]]:
    """A 0.1 project on PostgreSQL and the environment both versions run in."""
    root = tmp_path / "proj"
    (root / ".dlt").mkdir(parents=True)
    (root / "feed" / "source").mkdir(parents=True)
    shutil.copy(HERE / "feed_0_1.py", root / "feed" / "source" / "feed.py")
    (root / ".dlt" / "config.toml").write_text(CONFIG)
    secrets = f'[destination.postgres]\ncredentials = "{postgres_database.dlt_url}"\n'
    (root / ".dlt" / "secrets.toml").write_text(secrets)
    env = {
        "DLT_DATA_DIR": str(tmp_path / "dlt-home"),  # 0.1 kept working dirs in dlt's own
        "FEED_CALLS": str(tmp_path / "calls.txt"),
        "RUNTIME__DLTHUB_TELEMETRY": "false",
    }
    return root, env


def _query(db: Any, sql: str) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(db.url) as conn:
        return conn.execute(sql).fetchall()


def _run_0_1(exe: Path, root: Path, env: dict[str, str], *args: str, **extra: str) -> Any:
    return subprocess.run([str(exe), *args], cwd=root, env={**os.environ, **env, **extra},
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def test_migrate_adopts_runs_backfill_and_checkpoint_of_0_1(
    dltops_0_1: Path, project_0_1: tuple[Path, dict[str, str]], postgres_database: Any
) -> None:
    root, env = project_0_1
    ours: Callable[..., Any] = lambda *a: run_cli(*a, cwd=root, env=env)  # noqa: E731
    # -- what 0.1 leaves behind: a failed run with an active checkpoint after page 3, and a
    # backfill whose third chunk failed (chunks 1-2 completed, 4 pending)
    died = _run_0_1(dltops_0_1, root, env, "pipeline", "run", "-s", "feed", "-y",
                    FEED_FAIL_AFTER_PAGE="3")  # fmt: skip
    assert died.returncode == 1, died.stderr[-2000:]
    half = _run_0_1(dltops_0_1, root, env, "pipeline", "backfill", "feed", *WINDOW,
                    FEED_FAIL_FROM="2026-01-03T00:00:00+00:00")  # fmt: skip
    assert half.returncode == 1 and "injected chunk failure" in half.stderr, half.stderr[-2000:]
    chunks_0_1 = _query(postgres_database, "SELECT chunk_id, status FROM raw._dlt_backfills "
                        "ORDER BY chunk_id")  # fmt: skip
    assert [s for _, s in chunks_0_1] == ["completed", "completed", "failed", "pending"]
    (active,) = _query(postgres_database, "SELECT max(checkpoint_value) FROM "
                       "raw._dlt_custom_checkpoints WHERE status = 'active'")  # fmt: skip
    assert active[0] is not None

    # -- before: this version refuses the 0.1 config; migrate says what it will change
    assert ours("pipeline", "status").returncode == 2
    planned = ours("migrate", "--json")
    assert planned.returncode == 0, planned.stderr
    plan = json.loads(planned.stdout)
    areas = {(c["area"], c["subject"].rsplit(".", 1)[-1]) for c in plan["changes"]}
    assert {("config", "assertion]"), ("working dir", "feed"), ("table", "_dlt_ops_runs"),
            ("table", "_dlt_backfills"), ("table", "_dlt_custom_checkpoints")} <= areas  # fmt: skip
    assert plan["applied"] is False and "[dlt_ops.plugins.assertion]" in (
        root / ".dlt" / "config.toml").read_text()  # fmt: skip

    applied = ours("migrate", "--apply")
    assert applied.returncode == 0, applied.stderr
    config = (root / ".dlt" / "config.toml").read_text()
    assert "[dlt_ops.plugins.assertion_rule]" in config and "0.1's axis name" in config
    assert (root / ".dlt" / "config.toml.0.1.bak").read_text() == CONFIG
    assert ours("migrate").stdout.startswith("Nothing to migrate")

    # -- history: status shows 0.1's runs
    status = ours("pipeline", "status", "--json")
    assert status.returncode == 0, status.stderr
    (feed,) = json.loads(status.stdout)
    runs = feed["runs"]
    assert {r["dltops_version"] for r in runs} == {"0.1.0"}
    assert sorted(r["status"] for r in runs) == ["completed", "completed", "failed", "failed"]

    # -- coverage: the backfill resumes without reloading chunks 1-2
    resumed = ours("pipeline", "backfill", "feed", *WINDOW, "-y")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "2 completed, 2 skipped" in resumed.stdout
    window_rows = _query(postgres_database, "SELECT count(*), count(DISTINCT id) FROM raw.events "
                         "WHERE at < '2026-01-05'")  # fmt: skip
    assert window_rows == [(16, 16)]

    # -- resume point: the next run starts from 0.1's active checkpoint, not the window start
    Path(env["FEED_CALLS"]).write_text("")
    again = ours("pipeline", "run", "-s", "feed", "-y")
    assert again.returncode == 0, again.stderr[-2000:]
    first_call = Path(env["FEED_CALLS"]).read_text().split()[0]
    assert first_call < active[0] and first_call > "2026-01-01", (first_call, active)
