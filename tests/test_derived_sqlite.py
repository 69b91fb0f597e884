"""A project on dlt's ``sqlalchemy`` destination (a SQLite file) with no adapter package:
``[dlt_ops] derived_adapters`` gives it a ledger, status and backfill; without the key it runs
at core tier, as before."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

CONFIG = """
[dlt_ops]
default_destination = "sqlalchemy"
default_dataset = "ds"
{extra}

[sources.events_src.dlt_ops]
schedule = "@daily"
"""
DERIVED = 'derived_adapters = ["sqlalchemy"]'


def _sqlite_project(project, templates, extra: str) -> Path:  # noqa: ANN001
    root = project(CONFIG.format(extra=extra), {"events_src": templates["events"]})
    url = f"sqlite:///{root / 'events.db'}"
    (root / ".dlt" / "secrets.toml").write_text(
        f'[destination.sqlalchemy]\ncredentials = "{url}"\n'
    )
    return root


def _ledger(root: Path) -> list[tuple]:
    # dlt keeps each dataset of a SQLite destination in its own attached file
    with sqlite3.connect(root / "events__ds.db") as con:
        return con.execute(
            "SELECT status, trigger_source, records_loaded FROM _dlt_ops_runs"
        ).fetchall()


def test_derived_adapter_runs_writes_its_ledger_and_status_reads_it(
    project, templates, cli
) -> None:  # noqa: ANN001
    root = _sqlite_project(project, templates, DERIVED)
    run = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Capabilities: derived" in run.stderr and "untested" in run.stderr
    assert _ledger(root) == [("completed", "cli", 6)]

    status = cli("pipeline", "status", "--json", cwd=root)
    assert status.returncode == 0, status.stderr[-2000:]
    (doc,) = json.loads(status.stdout)
    assert doc["ledger"] == "ok" and doc["runs"][0]["status"] == "completed"
    text = cli("pipeline", "status", cwd=root).stdout
    assert "derived adapter" in text and "untested" in text

    listed = cli("plugins", "list", "--json", cwd=root)
    rows = [r for r in json.loads(listed.stdout) if r["name"] == "sqlalchemy"]
    assert [r["status"] for r in rows] == ["derived (untested)"]


def test_derived_adapter_backfills(project, templates, cli) -> None:  # noqa: ANN001
    root = _sqlite_project(project, templates, DERIVED)
    args = ("--from", "2026-01-01T00:00:00Z", "--to", "2026-01-04T00:00:00Z", "--chunk", "1d")
    proc = cli("pipeline", "backfill", "events_src", *args, cwd=root)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sorted(r[:2] for r in _ledger(root)) == [("completed", "backfill")] * 3
    again = cli("pipeline", "backfill", "events_src", *args, cwd=root)
    assert again.returncode == 0 and "3 skipped" in again.stdout + again.stderr


def test_without_the_key_the_run_is_core_tier(project, templates, cli) -> None:  # noqa: ANN001
    root = _sqlite_project(project, templates, "")
    run = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Capabilities: core (no adapter" in run.stderr
    assert not (root / "events__ds.db").exists() or not _has_ledger(root)


def _has_ledger(root: Path) -> bool:
    with sqlite3.connect(root / "events__ds.db") as con:
        found = con.execute("SELECT name FROM sqlite_master WHERE name = '_dlt_ops_runs'")
        return found.fetchall() != []
