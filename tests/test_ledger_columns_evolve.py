"""A ledger an older version wrote (fewer columns) is read as is and grows on the next run."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from dlt_ops.ledger.model import ALL_KEYS

CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"

[sources.events_src.dlt_ops]
schedule = "@daily"
"""
#: columns this version added after the first release of the table
LATER = ("orchestrator_run_id", "orchestrator_try", "queued_at", "note", "resumed_from")


def _db(root: Path) -> Path:
    return root / "events_src_pipeline.duckdb"


def _columns(root: Path) -> list[str]:
    with duckdb.connect(str(_db(root)), read_only=True) as con:
        rows = con.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = 'ds' AND table_name = '_dlt_ops_runs' ORDER BY ordinal_position"
        ).fetchall()
    return [r[0] for r in rows]


def _make_old(root: Path) -> None:
    with duckdb.connect(str(_db(root))) as con:
        for column in LATER:
            con.execute(f"ALTER TABLE ds._dlt_ops_runs DROP COLUMN {column}")


def test_old_ledger_reads_and_gains_the_new_columns(project, templates, cli) -> None:  # noqa: ANN001
    root = project(CONFIG, {"events_src": templates["events"]})
    first = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    assert first.returncode == 0, first.stderr
    _make_old(root)
    assert not set(LATER) & set(_columns(root))

    listed = cli("runs", "list", "-s", "events_src", "--json", cwd=root)
    assert listed.returncode == 0, listed.stderr
    (old_row,) = json.loads(listed.stdout)
    assert old_row["status"] == "completed"
    assert all(old_row.get(column) is None for column in LATER)

    second = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    assert second.returncode == 0, second.stderr
    assert _columns(root) == list(ALL_KEYS)
    with duckdb.connect(str(_db(root)), read_only=True) as con:
        statuses = con.execute(
            "SELECT status, note FROM ds._dlt_ops_runs ORDER BY started_at"
        ).fetchall()
    assert statuses == [("completed", None), ("completed", None)]
