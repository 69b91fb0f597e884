"""A live run's heartbeat keeps it from reading ``abandoned`` in another process.

``status`` calls a ``running`` row abandoned once it has gone 3 heartbeat intervals without a
beat (``ledger.status.ABANDONED_AFTER_BEATS``). Without the run's heartbeat thread every live
run longer than that would read ``abandoned: True`` from another terminal.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from dlt_ops.ledger.status import ABANDONED_AFTER_BEATS

HEARTBEAT_S = 0.4
CONFIG = f"""
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"
heartbeat_seconds = {HEARTBEAT_S}

[sources.slow_src.dlt_ops]
schedule = "@daily"
"""


def _live_run(cli, root: Path) -> dict:  # noqa: ANN001
    proc = cli("pipeline", "status", "--json", "-s", "slow_src", cwd=root)
    assert proc.returncode == 0, proc.stderr
    (state,) = json.loads(proc.stdout)
    assert state["ledger"] == "ok", state
    (run,) = state["runs"]
    return run


def test_a_live_run_past_three_heartbeats_is_not_abandoned(
    project,
    templates,
    cli,
    blocking_run,  # noqa: ANN001
) -> None:
    root = project(CONFIG, {"slow_src": templates["blocking"]})
    proc = blocking_run(root, "slow_src")
    try:
        first = _live_run(cli, root)
        seen = datetime.fromisoformat(first["heartbeat_at"] or first["started_at"])
        # well past the point where a row without a newer beat reads abandoned
        quiet_for = timedelta(seconds=HEARTBEAT_S * (ABANDONED_AFTER_BEATS + 1))
        deadline = time.monotonic() + 60
        while datetime.now(UTC) - seen <= quiet_for:  # polling the clock, bounded
            assert time.monotonic() < deadline, "the clock never moved past the window"
            assert proc.poll() is None, "the blocking run ended on its own"
            time.sleep(0.05)
        later = _live_run(cli, root)
    finally:
        (root.parent / "slow_src.release").write_text("go")
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert later["run_id"] == first["run_id"]
    assert later["status"] == "running" and later["abandoned"] is False, later
    beat = datetime.fromisoformat(later["heartbeat_at"])
    assert beat > seen, f"heartbeat_at never advanced past {seen}: {later}"
    assert "non-fatal" not in err  # no heartbeat write was refused
