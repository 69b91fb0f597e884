"""The first load into a new dataset takes its turn behind the dataset's first-load lock
(issue 37): PostgreSQL cannot run two of dlt's first-load DDL batches into one schema at once.

Deterministic: the test holds the lock itself, sees the run block on it in ``/proc/locks``
(a waiter line for the lock file's inode) with dlt's state table still absent, then lets go.
A load into a dataset that already has dlt's tables takes no turn at all.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CLI, write_project
from tests.test_scheduler_parallel import MODULE

pytestmark = pytest.mark.skipif(not Path("/proc/locks").exists(), reason="needs /proc/locks")


def _state_tables(db: Any) -> int:
    import psycopg

    with psycopg.connect(db.url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'fresh' "
            "AND table_name = '_dlt_pipeline_state'"
        ).fetchone()
    assert row is not None
    return int(row[0])


def _run(root: Path, source: str) -> subprocess.Popen[str]:
    env = {**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false"}
    return subprocess.Popen([sys.executable, "-c", CLI, "pipeline", "run", "-s", source, "-y"],
                            cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip


def _waits_on(path: Path) -> bool:
    """Some process is blocked on an flock of ``path`` (``/proc/locks``: ``N: -> FLOCK ...``)."""
    inode = f":{os.stat(path).st_ino} "
    return any(
        "->" in line and inode in line for line in Path("/proc/locks").read_text().splitlines()
    )


@pytest.mark.integration
def test_first_load_waits_for_its_turn_and_later_loads_take_none(
    postgres_database: Any, tmp_path: Path
) -> None:
    from dlt_ops.config import load_project_config
    from dlt_ops.destinations import project_registry
    from dlt_ops.runner.first_load import lock_path
    from dlt_ops.target import resolve_target

    config = '[dlt_ops]\ndefault_destination = "postgres"\ndefault_dataset = "fresh"\n\n'
    for name in ("one", "two"):
        config += f'[sources.{name}.dlt_ops]\nschedule = "@hourly"\n\n'
    root = write_project(tmp_path / "proj", config, {n: MODULE.replace("{rows}", "3")
                                                      for n in ("one", "two")})  # fmt: skip
    (root / ".dlt" / "secrets.toml").write_text(
        f'[destination.postgres]\ncredentials = "{postgres_database.dlt_url}"\n'
    )
    cfg = load_project_config(root)
    path = lock_path(root, resolve_target(project_registry(cfg), cfg, "one"))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another first load into "fresh" is under way
        first = _run(root, "one")
        deadline = time.monotonic() + 180
        while not _waits_on(path):  # polls /proc/locks, with a deadline
            assert first.poll() is None, first.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "the run never waited for the first-load lock"
            time.sleep(0.05)
        assert _state_tables(postgres_database) == 0  # it waits before dlt's DDL
    out, err = first.communicate(timeout=180)  # the lock is free: its load goes ahead
    assert first.returncode == 0, err[-3000:]
    assert _state_tables(postgres_database) == 1
    with path.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # held again: a load into the made dataset ignores it
        second = _run(root, "two")
        out, err = second.communicate(timeout=180)
    assert second.returncode == 0, err[-3000:]
