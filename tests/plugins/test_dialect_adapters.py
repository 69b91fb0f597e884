"""A plugin may claim one dialect of dlt's ``sqlalchemy`` destination (entry point
``sqlalchemy+sqlite``): projects whose sqlalchemy credentials are SQLite get its adapter (full
tier); other dialects stay on the derived path."""

from __future__ import annotations

import json
import os
import sqlite3
import textwrap
from pathlib import Path

SQLITE_PLUGIN = """
from dlt_ops import hookimpl


@hookimpl
def dlt_ops_register_destinations(register):
    def make():
        from dlt_ops.adapters.derived import derive_adapter

        adapter = derive_adapter("sqlalchemy", "sqlite:///capabilities-only.db")
        adapter.claimed_by = "acme-sqlite"
        return adapter

    register(make, name="sqlalchemy+sqlite")
"""
CONFIG = """
[dlt_ops]
default_destination = "sqlalchemy"
default_dataset = "ds"
derived_adapters = ["sqlalchemy"]

[sources.events_src.dlt_ops]
schedule = "@daily"
"""


def _install(site: Path) -> dict[str, str]:
    info = site / "acme_sqlite-0.0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-sqlite\nVersion: 0.0.1\n")
    (info / "entry_points.txt").write_text(
        "[dlt_ops.destination]\nsqlalchemy+sqlite = acme_sqlite_dialect\n"
    )
    (site / "acme_sqlite_dialect.py").write_text(textwrap.dedent(SQLITE_PLUGIN))
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}


def _project(project, templates, name: str, url: str) -> Path:  # noqa: ANN001
    root = project(CONFIG, {"events_src": templates["events"]}, name=name)
    (root / ".dlt" / "secrets.toml").write_text(
        f'[destination.sqlalchemy]\ncredentials = "{url}"\n'
    )
    return root


def _sqlalchemy_rows(cli, root: Path, env: dict[str, str]) -> dict[str, str]:  # noqa: ANN001
    listed = cli("plugins", "list", "--json", cwd=root, env=env)
    assert listed.returncode == 0, listed.stderr[-2000:]
    rows = json.loads(listed.stdout)
    return {r["module"]: r["status"] for r in rows if r["name"].startswith("sqlalchemy")}


def test_sqlite_credentials_get_the_dialect_plugin(tmp_path: Path, project, templates, cli) -> None:  # noqa: ANN001
    env = _install(tmp_path / "site")
    root = _project(project, templates, "lite", "sqlite:///{root}/events.db")
    secrets = root / ".dlt" / "secrets.toml"
    secrets.write_text(secrets.read_text().replace("{root}", str(root)))
    run = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Capabilities: full" in run.stderr and "derived" not in run.stderr
    with sqlite3.connect(root / "events__ds.db") as con:
        assert con.execute("SELECT status FROM _dlt_ops_runs").fetchall() == [("completed",)]
    rows = _sqlalchemy_rows(cli, root, env)
    assert rows["acme_sqlite_dialect"] == "ok"
    assert rows["dlt_ops.adapters.dialects[sqlalchemy+sqlite]"] == "ok"  # the alias
    assert not any(m.startswith("dlt_ops.adapters.derived") for m in rows)
    doctor = cli("plugins", "doctor", cwd=root, env=env)
    assert doctor.returncode == 0, doctor.stdout


def test_other_dialects_stay_derived(tmp_path: Path, project, templates, cli) -> None:  # noqa: ANN001
    env = _install(tmp_path / "site")
    root = _project(project, templates, "pg", "postgresql://u:p@127.0.0.1:9/db")
    rows = _sqlalchemy_rows(cli, root, env)
    assert rows["dlt_ops.adapters.derived[sqlalchemy]"] == "derived (untested)"
    assert not any(m.startswith("dlt_ops.adapters.dialects") for m in rows)
