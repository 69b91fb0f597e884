"""A third-party ledger sink written only from docs/hooks.md works end to end.

The plugin below is installed like any distribution (a ``*.dist-info`` with an entry point in
``dlt_ops.ledger_sink`` on ``PYTHONPATH``) and uses only what the docs name: ``hookimpl``, the
``register`` callback, ``LedgerSinkContext`` (``project_root``, ``options``), ``RunRecord``,
``LedgerQuery``, and the ``LedgerSink`` / ``RunReader`` / ``LedgerPruner`` members. It is the
project's only ledger: ``run``, ``status``, ``runs list``, ``runs show`` and ``runs prune`` all
go through it.
"""

from __future__ import annotations

import json
import sqlite3
import textwrap
from pathlib import Path

PLUGIN = '''
"""Runs kept in a SQLite file, one JSON document per attempt."""

import dataclasses
import json
import sqlite3
from datetime import datetime

from dlt_ops import hookimpl
from dlt_ops.ledger import RunRecord


def _encode(run):
    return json.dumps({
        key: {"at": value.isoformat()} if isinstance(value, datetime) else value
        for key, value in dataclasses.asdict(run).items()
    })


def _decode(body):
    values = {
        key: datetime.fromisoformat(value["at"]) if isinstance(value, dict) else value
        for key, value in json.loads(body).items()
    }
    return RunRecord(**values)


class SqliteLedger:
    def __init__(self, context):
        self.path = context.project_root / context.options.get("file", "runs.sqlite")
        self.target = str(self.path)

    def _db(self):
        # a connection per call: the heartbeat arrives on another thread
        db = sqlite3.connect(self.path)
        db.execute(
            "CREATE TABLE IF NOT EXISTS runs (run_id TEXT, source TEXT, started_at TEXT, "
            "body TEXT, PRIMARY KEY (run_id, source, started_at))"
        )
        return db

    def _put(self, run):
        db = self._db()
        with db:
            db.execute(
                "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?)",
                (run.run_id, run.source_section, run.started_at.isoformat(), _encode(run)),
            )
        db.close()

    def start(self, run):
        self._put(run)

    def heartbeat(self, run):
        self._put(run)

    def finish(self, run):
        self._put(run)

    def _all(self):
        if not self.path.exists():
            return None
        db = self._db()
        runs = [_decode(body) for (body,) in db.execute("SELECT body FROM runs")]
        db.close()
        return sorted(runs, key=lambda r: r.started_at, reverse=True)

    def read_runs(self, query):
        runs = self._all()
        if runs is None:
            return None
        return [
            r for r in runs
            if r.source_section == query.source
            and (query.resource is None or r.resource_name == query.resource)
            and (query.status is None or r.status == query.status)
            and (query.since is None or r.started_at >= query.since)
        ][: query.limit]

    def read_run(self, ref):
        return [r for r in self._all() or [] if r.run_id.startswith(ref)]

    def prune(self, older_than, *, dry_run):
        old = [r for r in self._all() or [] if r.started_at < older_than]
        if old and not dry_run:
            db = self._db()
            with db:
                for r in old:
                    db.execute(
                        "DELETE FROM runs WHERE run_id = ? AND source = ? AND started_at = ?",
                        (r.run_id, r.source_section, r.started_at.isoformat()),
                    )
            db.close()
        return len(old)


@hookimpl
def dlt_ops_register_ledger_sinks(register):
    register(SqliteLedger, name="sqlite_ledger")
'''

CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"
ledger_sinks = ["sqlite_ledger"]

[dlt_ops.ledger_sink.sqlite_ledger]
file = "ops/runs.sqlite"

[sources.events_src.dlt_ops]
schedule = "@daily"
"""


def _install(site: Path) -> dict[str, str]:
    info = site / "sqlite_ledger_plugin-0.0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sqlite-ledger\nVersion: 0.0.1\n")
    (info / "entry_points.txt").write_text(
        "[dlt_ops.ledger_sink]\nsqlite_ledger = sqlite_ledger_plugin\n"
    )
    (site / "sqlite_ledger_plugin.py").write_text(textwrap.dedent(PLUGIN))
    return {"PYTHONPATH": str(site)}


def test_a_sink_built_from_the_docs_serves_run_status_runs_show_and_prune(
    project, templates, cli, tmp_path: Path
) -> None:  # noqa: ANN001
    env = _install(tmp_path / "site")
    root = project(CONFIG, {"events_src": templates["events"]})
    (root / "ops").mkdir()

    run = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root, env=env)
    assert run.returncode == 0, run.stderr
    assert "Failed to write" not in run.stderr

    with sqlite3.connect(root / "ops" / "runs.sqlite") as db:
        (body,) = [b for (b,) in db.execute("SELECT body FROM runs")]
    assert json.loads(body)["status"] == "completed"

    status = json.loads(cli("pipeline", "status", "--json", cwd=root, env=env).stdout)[0]
    assert [r["status"] for r in status["runs"]] == ["completed"]
    run_id = status["runs"][0]["run_id"]
    assert status["runs"][0]["records_loaded"] == 6

    listed = cli("runs", "list", "--json", cwd=root, env=env)
    assert listed.returncode == 0, listed.stderr
    assert [r["run_id"] for r in json.loads(listed.stdout)] == [run_id]

    for ref in ("last", run_id, run_id[:8]):
        shown = cli("runs", "show", ref, "--json", cwd=root, env=env)
        assert shown.returncode == 0, shown.stderr
        doc = json.loads(shown.stdout)
        assert doc["run"]["run_id"] == run_id
        # receipts keep their own store in the destination, whichever sink keeps the runs
        (receipt,) = doc["receipt"]
        assert (receipt["resource_name"], receipt["rows_loaded"]) == ("events", 6)
    human = cli("runs", "show", run_id[:8], cwd=root, env=env)
    assert human.returncode == 0 and run_id in human.stdout

    dry = cli("runs", "prune", "--older-than", "1d", "--dry-run", cwd=root, env=env)
    assert dry.returncode == 0, dry.stderr
    assert "would delete 0 run(s)" in dry.stdout
