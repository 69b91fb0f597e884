"""Exit 2 means nothing was done: a refused run creates no database file, no schema, no row.

Each case is a mistake a user makes before any data moves — an unknown resource, a broken
assertion or secrets file, a dataset name the destination cannot hold, credentials in the
wrong file — and each must be caught before the ledger's start row, with a message that says
what to fix. A mistake found only once the run started is a failed run (exit 1), never exit 2.
"""

from __future__ import annotations

from pathlib import Path

import pytest

DUCKDB = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"

[sources.events_src.dlt_ops]
schedule = "@daily"
{extra}
"""

MODELED = """
import dlt
from pydantic import BaseModel


class Event(BaseModel):
    id: int
    kind: str


@dlt.resource(name="events", columns=Event, primary_key="id")
def events():
    yield [{"id": 1, "kind": "a"}, {"id": 2, "kind": "b"}]


@dlt.source(name="{name}")
def {name}_source():
    return events
"""


def _nothing_written(root: Path) -> None:
    assert not (root / "events_src_pipeline.duckdb").exists(), "a refused run created the file"
    pipelines = root / ".dlt-ops" / "pipelines"
    assert not pipelines.exists() or not any(pipelines.iterdir()), "dlt state was written"


def _refused(proc, *needles: str) -> None:  # noqa: ANN001
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


def test_unknown_resource(project, templates, cli) -> None:  # noqa: ANN001
    root = project(DUCKDB.format(extra=""), {"events_src": templates["events"]})
    proc = cli("pipeline", "run", "-s", "events_src", "-r", "nope", "-y", cwd=root)
    _refused(proc, "nope", "events")
    _nothing_written(root)


def test_invalid_assertion_config(project, templates, cli) -> None:  # noqa: ANN001
    extra = '[sources.events_src.dlt_ops.assertions.events]\nmin_rows_per_load = "lots"\n'
    root = project(DUCKDB.format(extra=extra), {"events_src": templates["events"]})
    proc = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    _refused(proc, "min_rows_per_load")
    _nothing_written(root)


def test_malformed_secrets_file(project, templates, cli) -> None:  # noqa: ANN001
    root = project(DUCKDB.format(extra=""), {"events_src": templates["events"]})
    (root / ".dlt" / "secrets.toml").write_text("[sources.events_src\napi_key = 'x'\n")
    proc = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    _refused(proc, "secrets.toml")
    assert "non-fatal" not in proc.stderr  # no ledger write was even attempted
    _nothing_written(root)


def test_unknown_source_prints_no_configuration_block(project, templates, cli) -> None:  # noqa: ANN001
    root = project(DUCKDB.format(extra=""), {"events_src": templates["events"]})
    proc = cli("pipeline", "run", "-s", "nope", "-y", cwd=root)
    _refused(proc, "nope")
    assert "Capabilities" not in proc.stderr
    _nothing_written(root)


def test_dataset_longer_than_duckdb_allows(project, templates, cli) -> None:  # noqa: ANN001
    root = project(DUCKDB.format(extra=""), {"events_src": templates["events"]})
    proc = cli("pipeline", "run", "-s", "events_src", "-y", "-d", "d" * 1024, cwd=root)
    _refused(proc, "characters long")
    _nothing_written(root)


@pytest.mark.integration
def test_dataset_longer_than_postgres_allows(project, templates, cli, postgres_database) -> None:  # noqa: ANN001
    import psycopg

    config = DUCKDB.format(extra="").replace('"duckdb"', '"postgres"')
    root = project(config, {"events_src": templates["events"]})
    env = {"DESTINATION__POSTGRES__CREDENTIALS": postgres_database.dlt_url}
    proc = cli("pipeline", "run", "-s", "events_src", "-y", "-d", "d" * 70, cwd=root, env=env)
    _refused(proc, "characters long", "63")
    with psycopg.connect(postgres_database.url, autocommit=True) as conn:
        schemas = conn.execute(
            "SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE 'ddd%'"
        ).fetchall()
    assert schemas == []


@pytest.mark.integration
def test_credentials_in_config_toml(project, templates, cli, postgres_database) -> None:  # noqa: ANN001
    import psycopg

    config = DUCKDB.format(extra="").replace('"duckdb"', '"postgres"')
    config += f'\n[destination.postgres]\ncredentials = "{postgres_database.dlt_url}"\n'
    root = project(config, {"events_src": templates["events"]})
    proc = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    _refused(proc, "secrets.toml", "config.toml")
    assert "unused" not in proc.stderr  # the password itself is never shown
    with psycopg.connect(postgres_database.url, autocommit=True) as conn:
        assert conn.execute(
            "SELECT count(*) FROM information_schema.schemata WHERE schema_name = 'ds'"
        ).fetchone() == (0,)
    validate = cli("pipeline", "validate", cwd=root)
    assert validate.returncode == 1, validate.stdout + validate.stderr
    assert "secrets.toml" in validate.stdout + validate.stderr


def test_preflight_honours_validate_exemptions(project, cli) -> None:  # noqa: ANN001
    extra = (
        "[sources.events_src.dlt_ops.assertions.events]\n"
        'required_columns = { value = ["legacy_col"], on_failure = "warn" }\n\n'
        "[sources.events_src.dlt_ops.rule_exemptions]\n"
        'assertion_columns_exist = "legacy_col is added by a downstream view"\n'
    )
    root = project(DUCKDB.format(extra=extra), {"events_src": MODELED})
    validate = cli("pipeline", "validate", cwd=root)
    assert "assertion_columns_exist" not in validate.stdout.replace("exempt", ""), validate.stdout
    proc = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert "legacy_col" in proc.stderr  # the warn verdict, not a preflight refusal


def test_unknown_key_in_source_table_stops_run(project, templates, cli) -> None:  # noqa: ANN001
    root = project(DUCKDB.format(extra='datset = "shop_raw"'), {"events_src": templates["events"]})
    proc = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    _refused(proc, "datset", "did you mean 'dataset'")
    _nothing_written(root)


def test_unknown_key_in_project_table_stops_backfill(project, templates, cli) -> None:  # noqa: ANN001
    config = DUCKDB.format(extra="").replace(
        'default_dataset = "ds"', 'default_dataset = "ds"\nstaleness_dayz = 3'
    )
    root = project(config, {"events_src": templates["events"]})
    args = ("--from", "2020-01-01T00:00:00Z", "--to", "2020-01-03T00:00:00Z", "--chunk", "1d")
    proc = cli("pipeline", "backfill", "events_src", *args, cwd=root)
    _refused(proc, "staleness_dayz", "did you mean 'staleness_days'")
    _nothing_written(root)
