"""Credentials reach a real server in every form dlt accepts for its postgres destination.

The ``role`` fixture's server demands the role's password (only the superuser is trusted), so
a test that connects as the role proves which password the lookup picked.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from dlt_ops.adapters import ConnectionTarget, DestinationSession, Statement
from dlt_ops.config import load_project_config
from dlt_ops.config.credentials import resolve_credentials
from dlt_ops.destinations import open_session, resolve_destination
from dlt_ops.errors import ConfigError, DestinationError, DestinationUnreachableError
from dlt_ops.plugins import PluginRegistry
from dlt_ops.testing.postgres import free_port
from dltops_postgres.adapter import PostgresAdapter
from dltops_postgres.credentials import libpq_params

WHO = Statement(
    "SELECT current_user, current_database(), current_setting('application_name'), "
    "current_setting('TimeZone')"
)


def _who(credentials: Any, tmp_path: Path, dataset: str = "creds_ds") -> tuple[Any, ...]:
    adapter = PostgresAdapter()
    target = ConnectionTarget("postgres", dataset, tmp_path, credentials=credentials)
    with DestinationSession.open(adapter, target) as session:
        return session.query(WHO)[0]


@pytest.mark.parametrize("scheme", ["postgresql", "postgres"])
def test_connection_string(role: Any, tmp_path: Path, scheme: str) -> None:
    url = role.url(scheme=scheme) + "?application_name=from_url"
    assert _who(url, tmp_path) == (role.user, role.dbname, "from_url", "UTC")


def test_field_form_with_string_values_from_env(role: Any, tmp_path: Path) -> None:
    # Environment variables arrive as strings; dlt coerces port and connect_timeout.
    fields = role.fields(port=str(role.server.port), connect_timeout="5", sslmode="disable")
    assert _who(fields, tmp_path)[:2] == (role.user, role.dbname)
    assert libpq_params(fields)["connect_timeout"] == 5


def test_field_form_query_table_passes_libpq_options(role: Any, tmp_path: Path) -> None:
    fields = role.fields(query={"application_name": "from_query", "sslmode": "prefer"})
    assert _who(fields, tmp_path)[2] == "from_query"


def test_session_timezone_is_honoured_and_timestamps_stay_aware(role: Any, tmp_path: Path) -> None:
    fields = role.fields(session_timezone="America/New_York")
    assert _who(fields, tmp_path)[3] == "America/New_York"
    adapter = PostgresAdapter()
    target = ConnectionTarget("postgres", "tz_ds", tmp_path, credentials=fields)
    with DestinationSession.open(adapter, target) as session:
        stamp = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
        (got,) = session.query(Statement("SELECT ?::timestamptz + interval '1 hour'"), stamp)[0]
    assert got.tzinfo is not None and got == stamp + timedelta(hours=1)


def test_wrong_password_is_refused_not_unreachable(role: Any, tmp_path: Path) -> None:
    if not role.server.password_auth:
        pytest.xfail("external server: its pg_hba.conf may trust every role")
    with pytest.raises(DestinationError) as caught:
        _who(role.url(password="not-the-password"), tmp_path)
    assert not isinstance(caught.value, DestinationUnreachableError)
    assert "password authentication failed" in str(caught.value)


def test_env_password_overrides_fields_in_secrets(
    role: Any, project: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    fields = role.fields(password="stale-password-in-file")
    body = "\n".join(
        f'{k} = "{v}"' if isinstance(v, str) else f"{k} = {v}" for k, v in fields.items()
    )
    root = project(
        config='[sources.orders.dlt_ops]\ndestination = "postgres"\ndataset = "orders"\n',
        secrets=f"[destination.postgres.credentials]\n{body}\n",
    )
    config = load_project_config(root)
    where = resolve_destination(config, "orders")
    if role.server.password_auth:
        with pytest.raises(DestinationError, match="password authentication failed"):
            open_session(PluginRegistry(), config, where).close()
    monkeypatch.setenv("DESTINATION__POSTGRES__CREDENTIALS__PASSWORD", role.password)
    with open_session(PluginRegistry(), config, where) as session:
        assert session.query(WHO)[0][:2] == (role.user, role.dbname)


def test_pipeline_scoped_section_wins(
    role: Any, project: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    closed = free_port()
    root = project(
        config='[sources.orders.dlt_ops]\ndestination = "postgres"\ndataset = "orders"\n'
        '[sources.other.dlt_ops]\ndestination = "postgres"\ndataset = "other"\n',
        secrets=(
            f'[destination.postgres]\ncredentials = "{role.url(port=closed)}"\n'
            f'[orders_pipeline.destination.postgres]\ncredentials = "{role.url()}"\n'
        ),
    )
    config = load_project_config(root)
    with open_session(PluginRegistry(), config, resolve_destination(config, "orders")) as s:
        assert s.query(WHO)[0][0] == role.user
    with pytest.raises(DestinationUnreachableError, match=f"127.0.0.1:{closed}"):
        open_session(PluginRegistry(), config, resolve_destination(config, "other"))
    # A pipeline-scoped environment variable beats every file.
    monkeypatch.setenv("OTHER_PIPELINE__DESTINATION__POSTGRES__CREDENTIALS", role.url())
    with open_session(PluginRegistry(), config, resolve_destination(config, "other")) as s:
        assert s.query(WHO)[0][0] == role.user


def test_parsing_matches_dlt(role: Any) -> None:
    from dlt.destinations.impl.postgres.configuration import PostgresCredentials

    url = role.url() + "?sslmode=disable&connect_timeout=7"
    theirs = PostgresCredentials(url)
    ours = libpq_params(url)
    assert (ours["user"], ours["password"], ours["host"], ours["port"], ours["dbname"]) == (
        theirs.username,
        theirs.password,
        theirs.host,
        theirs.port,
        theirs.database,
    )
    assert ours["sslmode"] == theirs.get_query()["sslmode"]
    assert ours["connect_timeout"] == theirs.connect_timeout == 7


def test_dlt_loads_and_the_adapter_reads_with_the_same_credentials(
    role: Any, project: Callable[..., Path], tmp_path: Path
) -> None:
    import dlt

    root = project(secrets=f'[destination.postgres]\ncredentials = "{role.url()}"\n')
    credentials = resolve_credentials(root, "postgres", "orders_pipeline", environ={})
    pipeline = dlt.pipeline(
        "orders_pipeline",
        destination=dlt.destinations.postgres(credentials=credentials),
        dataset_name="orders_data",
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    pipeline.run([{"id": 1, "name": "a"}, {"id": 2, "name": "b"}], table_name="orders")
    adapter = PostgresAdapter()
    target = ConnectionTarget("postgres", "orders_data", root, credentials=credentials)
    with DestinationSession.open(adapter, target) as session:
        names = [c.name for c in session.fetch_columns("orders") or []]
        rows = session.query(Statement("SELECT id, name FROM {orders} ORDER BY id"))
    assert names[:2] == ["id", "name"]
    assert rows == [(1, "a"), (2, "b")]


@pytest.mark.parametrize(
    ("credentials", "message"),
    [
        (None, "no credentials found"),
        ({}, "no credentials found"),
        ("mysql://u:pw@h/db", "not a postgresql:// connection string"),
        ("host=h password=pw", "not a postgresql:// connection string"),
        ("postgresql://u:pw@h:99999/db", "not a valid connection string"),
        ({"host": "h", "port": "five"}, "'port' must be a whole number"),
    ],
)
def test_unusable_credentials_are_config_errors(credentials: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        libpq_params(credentials)
    assert "DESTINATION__POSTGRES__CREDENTIALS" in str(caught.value)
    assert caught.value.exit_code == 2


def test_connect_timeout_defaults_to_the_target_setting() -> None:
    assert libpq_params({"host": "h"}, default_timeout_s=10.0)["connect_timeout"] == 10
    assert libpq_params({"host": "h"}, default_timeout_s=2.5)["connect_timeout"] == 3
    assert libpq_params({"host": "h", "connect_timeout": 4}, 10.0)["connect_timeout"] == 4


def test_the_pinned_dlt_destination_keeps_every_libpq_option(tmp_path: Path) -> None:
    """A table of fields handed to dlt keeps its libpq options: at the top level dlt's own
    credentials would drop ``sslmode`` without a word (a run without TLS)."""
    fields = {"host": "db.internal", "port": 5433, "database": "analytics", "username": "loader",
              "password": "p@ss word", "sslmode": "verify-full",
              "query": {"application_name": "dltops"}}  # fmt: skip
    target = ConnectionTarget("postgres", "ds", tmp_path, credentials=fields)
    dest = PostgresAdapter().dlt_destination(target)
    credentials = dest.spec(credentials=dest.config_params["credentials"]).credentials
    if isinstance(credentials, str):  # dlt keeps the native string until it resolves
        from dlt.destinations.impl.postgres.configuration import PostgresCredentials

        parsed = PostgresCredentials()
        parsed.parse_native_representation(credentials)
        credentials = parsed
    assert (credentials.host, credentials.port, credentials.database) == (
        "db.internal", 5433, "analytics",
    )  # fmt: skip
    assert (credentials.username, credentials.password) == ("loader", "p@ss word")
    assert credentials.query["sslmode"] == "verify-full"
    assert credentials.query["application_name"] == "dltops"


def test_no_credentials_found_leaves_dlt_to_resolve_them(tmp_path: Path) -> None:
    assert PostgresAdapter().dlt_destination(ConnectionTarget("postgres", "ds", tmp_path)) is None
