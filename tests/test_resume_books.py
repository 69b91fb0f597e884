"""A resume from a checkpoint is on the books, and the backfill it names recovers the skip.

The checkpoints example (20 hourly events, 3 per page, a checkpoint every 2 pages) dies after
page 3; the re-run resumes from the page-2 checkpoint (05:00, minus the 1 s overlap) and so
never extracts 00:00-04:00. The resumed run's ledger row and receipt record that span, a
WARNING says it, ``runs show`` prints the backfill that loads it, and that backfill (run
twice) leaves every event exactly once, for an append and for a merge table.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "checkpoints_demo"
SOURCE = "github_events_api"
DLT_OPS = str(Path(sys.executable).parent / "dlt-ops")
START, RESUMED = "2026-01-01T00:00:00+00:00", "2026-01-01T04:59:59+00:00"
BACKFILL = f"dlt-ops pipeline backfill {SOURCE} -r events --from {START} --to {RESUMED} --chunk 1d"


@pytest.fixture(params=["append", "merge"])
def project(request: pytest.FixtureRequest, tmp_path: Path):  # noqa: ANN201
    root = tmp_path / "project"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".dlt-ops", "*.duckdb*"))
    module = root / "github" / "resource" / "events.py"
    module.write_text(
        module.read_text().replace(
            'write_disposition="append"', f'write_disposition="{request.param}"'
        )
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DESTINATION__", "GITHUB_"))}
    env.update(RUNTIME__DLTHUB_TELEMETRY="false", DLT_DATA_DIR=str(tmp_path / "dlt-data"))

    def cli(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [DLT_OPS, "--root", str(root), "--log-format", "json", *args],
            capture_output=True, text=True, env={**env, **extra}, timeout=300, check=False,
        )  # fmt: skip

    cli.root = root  # type: ignore[attr-defined]
    return cli


def _events(root: Path) -> list[tuple[int, int]]:
    with duckdb.connect(str(root / f"{SOURCE}_pipeline.duckdb"), read_only=True) as con:
        return con.execute(
            "SELECT id, count(*) FROM github_events_raw.events GROUP BY id ORDER BY id"
        ).fetchall()


def _warnings(stderr: str) -> list[str]:
    out = []
    for line in stderr.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("level") == "warning":
            out.append(event["event"])
    return out


def test_resume_is_booked_and_its_backfill_recovers_the_span_once(project) -> None:  # noqa: ANN001
    run = ("pipeline", "run", "-s", SOURCE, "-y")
    failed = project(*run, GITHUB_EVENTS_FAIL_AFTER_PAGE="3")
    assert failed.returncode == 1, failed.stderr[-2000:]
    resumed = project(*run)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    said = (
        f"[events] resumed from checkpoint 2026-01-01T05:00:00+00:00: the span [{START}, "
        f"{RESUMED}) was not extracted by this run; load it with: {BACKFILL}"
    )
    assert said in _warnings(resumed.stderr)
    assert [i for i, _ in _events(project.root)] == list(range(6, 21))  # 1-5 were skipped

    shown = project("runs", "show", "last", "-s", SOURCE)
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert f"  ! {said}" in shown.stdout
    doc = json.loads(project("runs", "show", "last", "-s", SOURCE, "--json").stdout)
    assert json.loads(doc["run"]["resumed_from"]) == [{
        "resource": "events", "checkpoint": "2026-01-01T05:00:00+00:00",
        "skipped_from": START, "resumed_from": RESUMED,
    }]  # fmt: skip
    assert doc["resumes"][0]["recover"] == BACKFILL
    (row,) = doc["receipt"]
    assert (row["skipped_from"], row["resumed_from"]) == (START, RESUMED)

    for _ in range(2):  # the printed command, as printed; a second time changes nothing
        backfill = project(*shlex.split(BACKFILL)[1:], "-y")
        assert backfill.returncode == 0, backfill.stderr[-3000:]
        assert _events(project.root) == [(i, 1) for i in range(1, 21)]

    again = project(*run)  # a plain run after: nothing new, nothing resumed
    assert again.returncode == 0, again.stderr[-2000:]
    assert not any("resumed from checkpoint" in w for w in _warnings(again.stderr))
    assert _events(project.root) == [(i, 1) for i in range(1, 21)]
    doc = json.loads(project("runs", "show", "last", "-s", SOURCE, "--json").stdout)
    assert doc["run"]["resumed_from"] is None and doc["resumes"] == []


@pytest.mark.parametrize("project", ["append"], indirect=True)
def test_old_receipts_table_reads_and_gains_the_resume_columns(project) -> None:  # noqa: ANN001
    run = ("pipeline", "run", "-s", SOURCE, "-y")
    assert project(*run).returncode == 0
    db = str(project.root / f"{SOURCE}_pipeline.duckdb")
    with duckdb.connect(db) as con:
        for column in ("skipped_from", "resumed_from"):
            con.execute(f"ALTER TABLE github_events_raw._dlt_ops_receipts DROP COLUMN {column}")
    shown = project("runs", "show", "last", "-s", SOURCE, "--json")
    assert shown.returncode == 0, shown.stderr[-2000:]
    (row,) = json.loads(shown.stdout)["receipt"]
    assert row["skipped_from"] is None and row["resumed_from"] is None
    assert project(*run).returncode == 0  # the next write adds the columns back
    with duckdb.connect(db, read_only=True) as con:
        names = {r[0] for r in con.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = '_dlt_ops_receipts'"
        ).fetchall()}  # fmt: skip
    assert {"skipped_from", "resumed_from"} <= names


@pytest.mark.parametrize("project", ["append"], indirect=True)
def test_seed_cursor_moves_the_scheduled_cursor_to_the_backfill_end(project) -> None:  # noqa: ANN001
    window = ("--from", START, "--to", "2026-01-01T12:00:00+00:00", "--chunk", "1d")
    done = project("pipeline", "backfill", SOURCE, *window, "--seed-cursor", "-y", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    assert summary["covered"] and summary["seed_run_id"]
    # the chunk loaded 00:00-11:00, the seeding run 12:00-19:00: every event once
    assert _events(project.root) == [(i, 1) for i in range(1, 21)]
    assert "[events] cursor seeded to 2026-01-01T12:00:00+00:00: this and later runs extract " \
        "from there" in _warnings(done.stderr)  # fmt: skip
    again = project("pipeline", "run", "-s", SOURCE, "-y")  # the next scheduled run
    assert again.returncode == 0, again.stderr[-2000:]
    assert _events(project.root) == [(i, 1) for i in range(1, 21)]  # nothing re-extracted


@pytest.mark.parametrize("project", ["append"], indirect=True)
def test_seed_cursor_never_jumps_a_gap(project) -> None:  # noqa: ANN001
    window = ("--from", "2026-01-01T06:00:00+00:00", "--to", "2026-01-01T12:00:00+00:00")
    done = project("pipeline", "backfill", SOURCE, *window, "--chunk", "1d", "--seed-cursor", "-y")
    assert done.returncode == 1
    assert (
        "cannot seed the cursor of resource 'events': its cursor stands at "
        f"{START}, before the backfill's --from 2026-01-01T06:00:00+00:00"
    ) in done.stderr
    assert [i for i, _ in _events(project.root)] == list(range(7, 13))  # the backfill only
