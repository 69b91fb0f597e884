"""The same run from any working directory: ``dlt-ops --root <project>`` started elsewhere loads
where a run from the project root would, and ``status`` from the root sees it.

A derived adapter (dlt's ``sqlalchemy`` destination on a SQLite file) and PostgreSQL, each with
its credentials in the project's ``.dlt/`` files, never in the environment (the environment
would hide a lookup made in the wrong directory).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

SQLITE = """
[dlt_ops]
default_destination = "sqlalchemy"
default_dataset = "ds"
derived_adapters = ["sqlalchemy"]

[sources.events_src.dlt_ops]
schedule = "@daily"
"""

POSTGRES = """
[dlt_ops]
default_destination = "postgres"
default_dataset = "ds"

[sources.events_src.dlt_ops]
schedule = "@daily"
"""

SQLITE_URL = "sqlite:///data/rel.db"  # relative: the project root's data/rel.db
#: where the credentials sit; a file path is no secret, so config.toml may hold it
CREDENTIALS = {
    "secrets_toml": ("secrets.toml", f'[destination.sqlalchemy]\ncredentials = "{SQLITE_URL}"\n'),
    "config_toml": ("config.toml", f'[destination.sqlalchemy]\ncredentials = "{SQLITE_URL}"\n'),
    "config_toml_table": (
        "config.toml",
        '[destination.sqlalchemy.credentials]\ndrivername = "sqlite"\ndatabase = "data/rel.db"\n',
    ),
}
#: the events source, taking a value from the project's config.toml (dlt must read that file)
CONFIGURED = """
[sources.events_src]
greeting = "from the project"
"""


def _configured_source(templates) -> str:  # noqa: ANN001
    return templates["events"].replace(
        "def {name}_source():\n",
        "def {name}_source(greeting: str = dlt.config.value):\n"
        "    assert greeting == 'from the project', greeting\n",
    )


def _sqlite_project(project, templates, where: str = "secrets_toml") -> Path:  # noqa: ANN001
    file, text = CREDENTIALS[where]
    config = SQLITE + CONFIGURED + (text if file == "config.toml" else "")
    root = project(config, {"events_src": _configured_source(templates)})
    (root / "data").mkdir()
    if file == "secrets.toml":
        (root / ".dlt" / "secrets.toml").write_text(text)
    return root


def _elsewhere(tmp_path: Path) -> Path:
    """A working directory with no project in it."""
    other = tmp_path / "elsewhere"
    other.mkdir()
    return other


def _rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as con:
        return con.execute(sql).fetchall()


def _assert_status_shows_run(cli, root: Path, env: dict[str, str] | None = None) -> None:  # noqa: ANN001
    status = cli("pipeline", "status", "--json", cwd=root, env=env)
    assert status.returncode == 0, status.stderr[-2000:]
    (doc,) = json.loads(status.stdout)
    assert doc["ledger"] == "ok", doc
    assert [(r["status"], r["records_loaded"]) for r in doc["runs"]] == [("completed", 6)]


@pytest.mark.parametrize("where", sorted(CREDENTIALS))
def test_derived_sqlite_run_with_root_from_another_directory(
    project, templates, cli, tmp_path, where
) -> None:  # noqa: ANN001
    root = _sqlite_project(project, templates, where)
    other = _elsewhere(tmp_path)

    run = cli("--root", str(root), "pipeline", "run", "-s", "events_src", "-y", cwd=other)
    assert run.returncode == 0, run.stderr[-3000:]

    # dlt keeps dataset `ds` of data/rel.db in data/rel__ds.db: both under the project root
    dataset_file = root / "data" / "rel__ds.db"
    assert _rows(dataset_file, "SELECT count(*) FROM events") == [(6,)]
    assert _rows(dataset_file, "SELECT status FROM _dlt_ops_runs") == [("completed",)]
    assert list(other.iterdir()) == []  # nothing landed in the caller's directory
    _assert_status_shows_run(cli, root)


def test_derived_sqlite_relative_path_from_the_root_lands_in_the_same_file(
    project, templates, cli
) -> None:  # noqa: ANN001
    root = _sqlite_project(project, templates)
    run = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root / "data")
    assert run.returncode == 0, run.stderr[-3000:]
    assert _rows(root / "data" / "rel__ds.db", "SELECT count(*) FROM events") == [(6,)]
    assert not (root / "data" / "data").exists()  # not resolved against the cwd
    _assert_status_shows_run(cli, root)


def test_postgres_run_with_root_from_another_directory(
    project, templates, cli, tmp_path, postgres_database
) -> None:  # noqa: ANN001
    root = project(POSTGRES, {"events_src": templates["events"]})
    (root / ".dlt" / "secrets.toml").write_text(
        f'[destination.postgres]\ncredentials = "{postgres_database.dlt_url}"\n'
    )
    other = _elsewhere(tmp_path)

    run = cli("--root", str(root), "pipeline", "run", "-s", "events_src", "-y", cwd=other)
    assert run.returncode == 0, run.stderr[-3000:]
    assert list(other.iterdir()) == []
    _assert_status_shows_run(cli, root)

    import psycopg

    with psycopg.connect(postgres_database.url) as con:
        assert con.execute("SELECT count(*) FROM ds.events").fetchone() == (6,)


def _credential_findings(cli, root: Path) -> list[dict]:  # noqa: ANN001
    proc = cli("pipeline", "validate", "--json", cwd=root)
    return [f for f in json.loads(proc.stdout) if f["rule"] == "secrets_not_in_config"]


#: where a password in config.toml may sit: every section dlt-ops (and dlt) looks in
PASSWORD_SECTIONS = ["destination.sqlalchemy", "events_src_pipeline.destination.sqlalchemy"]


@pytest.mark.parametrize("section", PASSWORD_SECTIONS)
def test_derived_credentials_in_config_toml_validate_as_they_run(
    project, templates, cli, tmp_path, section
) -> None:  # noqa: ANN001
    """A file path in config.toml passes validate and the run uses it; a password there is
    refused by both, the run before it writes anything (the derived adapter hands dlt what
    dlt-ops found, so nothing but this check stands between config.toml and the load)."""
    root = _sqlite_project(project, templates, "config_toml")
    assert _credential_findings(cli, root) == []
    other = _elsewhere(tmp_path)
    run = cli("--root", str(root), "pipeline", "run", "-s", "events_src", "-y", cwd=other)
    assert run.returncode == 0, run.stderr[-3000:]

    url = "postgresql+psycopg://loader:pw@127.0.0.1:9/nowhere"  # a server through sqlalchemy
    secret = project(
        f'{SQLITE}\n[{section}]\ncredentials = "{url}"\n',
        {"events_src": templates["events"]},
        name="with_password",
    )
    (finding,) = _credential_findings(cli, secret)
    assert finding["source"] == "events_src"
    assert f"{section}.credentials" in finding["message"]
    before = sorted(secret.rglob("*"))  # validate's caches included
    refused = cli("--root", str(secret), "pipeline", "run", "-s", "events_src", "-y", cwd=other)
    assert refused.returncode == 2, refused.stderr[-2000:]
    assert "config.toml" in refused.stderr
    assert sorted(secret.rglob("*")) == before and list(other.iterdir()) == []


#: Google's default credentials probe a metadata server off this machine; the emulator takes
#: anonymous ones (the stand-in the BigQuery package's dlt tests patch in). Their project is
#: not the emulator's: only the project's secrets.toml names that one
BIGQUERY = """
[dlt_ops]
default_destination = "bigquery"
default_dataset = "{dataset}"

[sources.events_src.dlt_ops]
schedule = "@daily"
"""


@pytest.mark.integration
@pytest.mark.filterwarnings("ignore:Cannot create BigQuery Storage client:UserWarning")
def test_bigquery_run_with_root_from_another_directory(
    project, templates, cli, tmp_path, bigquery_emulator, bigquery_cli_env
) -> None:  # noqa: ANN001
    import uuid

    dataset = f"elsewhere_{uuid.uuid4().hex[:10]}"
    root = project(BIGQUERY.format(dataset=dataset), {"events_src": templates["events"]})
    env = bigquery_cli_env(bigquery_emulator, root)
    other = _elsewhere(tmp_path)

    run = cli("--root", str(root), "pipeline", "run", "-s", "events_src", "-y", cwd=other, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    assert list(other.iterdir()) == []
    _assert_status_shows_run(cli, root, env)
    rows = bigquery_emulator.client().query(f"SELECT count(*) FROM `{dataset}.events`").result()
    assert [tuple(r) for r in rows] == [(6,)]


def test_postgres_fields_in_config_toml_with_the_password_in_the_environment(
    project, templates, cli, postgres_database
) -> None:  # noqa: ANN001
    """docs/destinations.md's split: every field but the password in config.toml, the password
    in an environment variable. dlt alone refuses a credentials table found in config.toml."""
    db = postgres_database
    fields = (f'[destination.postgres.credentials]\nhost = "{db.host}"\nport = {db.port}\n'
              f'database = "{db.dbname}"\nusername = "{db.user}"\n')  # fmt: skip
    root = project(POSTGRES + fields, {"events_src": templates["events"]})
    env = {"DESTINATION__POSTGRES__CREDENTIALS__PASSWORD": "unused-by-trust-auth"}

    run = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "unused-by-trust-auth" not in run.stdout + run.stderr
    import psycopg

    with psycopg.connect(db.url) as con:
        assert con.execute("SELECT count(*) FROM ds.events").fetchone() == (6,)
        (status,) = con.execute("SELECT status FROM ds._dlt_ops_runs").fetchone()
    assert status == "completed"
