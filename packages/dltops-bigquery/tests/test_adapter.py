"""BigQuery-specific behaviour beyond the kit: rendering, parameter types, credentials,
sessions and transactions, locations, unreachable endpoints."""

from __future__ import annotations

import datetime as dt
import json
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from dlt_ops.adapters import Column, ColumnType, ConnectionTarget, Statement, TableSpec
from dlt_ops.errors import DestinationError, DestinationUnreachableError, StatementError
from dltops_bigquery import _params
from dltops_bigquery._auth import google_credentials, settings_for
from dltops_bigquery.adapter import BigQueryAdapter, BigQueryConnection

T = TableSpec(
    "t",
    (
        Column("id", ColumnType.BIGINT, nullable=False),
        Column("txt", ColumnType.TEXT),
        Column("num", ColumnType.DOUBLE),
        Column("ts", ColumnType.TIMESTAMPTZ),
    ),
    unique=("id",),
)
INSERT = Statement("INSERT INTO {t} (id, txt, num, ts) VALUES (?, ?, ?, ?)")
IDS = Statement("SELECT id FROM {t} ORDER BY id")


def _target(credentials: object = None, **options: object) -> ConnectionTarget:
    return ConnectionTarget("bigquery", "ds", Path("/nonexistent"), credentials, options=options)


def _rsa_pem() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


# -- no server needed ------------------------------------------------------------------------


def test_plugin_module_imports_no_sdk() -> None:
    code = (
        "import sys, dltops_bigquery.plugin; "
        "bad = [m for m in sys.modules if m.startswith(('google', 'dlt.'))]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_render_uses_backticks_and_bigquery_literal_escapes() -> None:
    stmt = Statement("SELECT \"order\" FROM {t} WHERE a = 'it''s \\ x' AND b = ?")
    assert BigQueryAdapter().render(stmt, "ds") == (
        "SELECT `order` FROM `ds`.`t` WHERE a = 'it\\'s \\\\ x' AND b = ?"
    )


def test_create_table_sql_has_bigquery_types_and_no_unique() -> None:
    sql = BigQueryAdapter().create_table_sql("ds", T)
    assert sql == (
        "CREATE TABLE IF NOT EXISTS `ds`.`t` (`id` INT64 NOT NULL, `txt` STRING, "
        "`num` FLOAT64, `ts` TIMESTAMP)"
    )


@pytest.mark.parametrize(
    ("value", "bq_type"),
    [
        (True, "BOOL"),
        (7, "INT64"),
        (1.5, "FLOAT64"),
        ("x", "STRING"),
        (b"x", "BYTES"),
        (Decimal("1.25"), "NUMERIC"),
        (dt.datetime(2026, 1, 1, tzinfo=dt.UTC), "TIMESTAMP"),
        (dt.date(2026, 1, 1), "DATE"),
        (dt.time(12, 0), "TIME"),
    ],
)
def test_parameters_are_typed(value: object, bq_type: str) -> None:
    assert _params.bind(value).type_ == bq_type


def test_naive_datetime_binds_as_utc_and_arrays_by_element_type() -> None:
    naive = _params.bind(dt.datetime(2026, 1, 1, 12))
    assert naive.value.tzinfo is dt.UTC
    array = _params.bind([1, 2])
    assert (array.array_type, array.values) == ("INT64", [1, 2])


@pytest.mark.parametrize("value", [object(), {"a": 1}, [1, None], [1, "a"]])
def test_unbindable_values_raise_statement_error(value: object) -> None:
    with pytest.raises(StatementError):
        _params.bind(value)


def test_settings_from_dlt_credential_forms(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BIGQUERY_EMULATOR_HOST", raising=False)
    as_json = json.dumps({"project_id": "p1", "client_email": "a@b", "private_key": "k" * 8})
    s = settings_for(_target(as_json, location="EU"))
    assert (s.project, s.location, s.anonymous) == ("p1", "EU", False)
    s = settings_for(_target({"project_id": "p1", "location": "asia-east1"}, project="p2"))
    assert (s.project, s.location) == ("p2", "asia-east1")
    monkeypatch.setenv("BIGQUERY_EMULATOR_HOST", "http://127.0.0.1:1")
    assert settings_for(_target({"project_id": "p"})).anonymous
    assert not settings_for(_target({"project_id": "p", "private_key": "k" * 8})).anonymous


def test_malformed_credentials_error_does_not_echo_them() -> None:
    with pytest.raises(DestinationError) as info:
        settings_for(_target("not-json-super-secret-value"))
    assert "super-secret" not in str(info.value)
    assert "destination.bigquery.credentials" in str(info.value)


def test_service_account_fields_build_credentials_offline() -> None:
    from google.oauth2 import service_account

    pem = _rsa_pem().replace("\n", "\\n")  # as pasted into an environment variable
    fields = {"project_id": "proj", "client_email": "sa@proj.iam.example", "private_key": pem}
    creds, project = google_credentials(settings_for(_target(fields)))
    assert isinstance(creds, service_account.Credentials)
    assert (project, creds.service_account_email) == ("proj", "sa@proj.iam.example")


def test_oauth_refresh_token_fields_build_user_credentials() -> None:
    from google.oauth2.credentials import Credentials

    fields = {"project_id": "p", "client_id": "cid", "client_secret": "cs", "refresh_token": "rt"}
    creds, project = google_credentials(settings_for(_target(fields)))
    assert isinstance(creds, Credentials) and creds.refresh_token == "rt" and project == "p"


def test_missing_project_is_a_destination_error() -> None:
    with pytest.raises(DestinationError, match="project"):
        BigQueryAdapter().connect(_target(None, anonymous=True))


def test_unreachable_endpoint_fails_fast_as_unreachable() -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    adapter = BigQueryAdapter()
    target = ConnectionTarget(
        "bigquery",
        "ds",
        Path("/nonexistent"),
        {"project_id": "p"},
        connect_timeout_s=1.0,
        options={"api_endpoint": f"http://127.0.0.1:{port}", "anonymous": True},
    )
    client = adapter.connect(target)
    started = time.monotonic()
    with pytest.raises(DestinationUnreachableError):
        adapter.query(client, "ds", Statement("SELECT 1"))
    assert time.monotonic() - started < 20
    adapter.close(client)
    adapter.close(client)  # idempotent


# -- on the emulator (and real BigQuery in the live lane) --------------------------------------


@pytest.fixture
def bq(
    bigquery_target_factory: Callable[[str], ConnectionTarget],
) -> Iterator[tuple[BigQueryAdapter, BigQueryConnection, str]]:
    adapter = BigQueryAdapter()
    dataset = f"bqa_{uuid.uuid4().hex[:12]}"
    client = adapter.connect(bigquery_target_factory(dataset))
    adapter.ensure_dataset(client, dataset)
    adapter.create_table(client, dataset, T)
    yield adapter, client, dataset
    client.bq.delete_dataset(dataset, delete_contents=True, not_found_ok=True, timeout=30)
    adapter.close(client)


@pytest.mark.integration
def test_literals_with_quotes_and_backslashes_match_bound_values(bq: Any) -> None:
    adapter, client, dataset = bq
    adapter.execute(client, dataset, INSERT, (1, "it's \\ back", None, None))
    find = Statement("SELECT id FROM {t} WHERE txt = 'it''s \\ back'")
    assert adapter.query(client, dataset, find) == [(1,)]


@pytest.mark.integration
def test_none_parameters_work_in_updates_and_predicates(bq: Any) -> None:
    adapter, client, dataset = bq
    stamp = dt.datetime(2026, 5, 1, tzinfo=dt.UTC)
    adapter.execute(client, dataset, INSERT, (1, "a", 2.5, stamp))
    update = Statement("UPDATE {t} SET num = ?, ts = ?, txt = ? WHERE id = ?")
    assert adapter.execute(client, dataset, update, (None, None, None, 1)) == 1
    row = Statement("SELECT txt, num, ts FROM {t} WHERE id = ? AND ? IS NULL")
    assert adapter.query(client, dataset, row, (1, None)) == [(None, None, None)]


@pytest.mark.integration
def test_array_parameter_in_unnest(bq: Any) -> None:
    adapter, client, dataset = bq
    for i in range(1, 5):
        adapter.execute(client, dataset, INSERT, (i, None, None, None))
    some = Statement("SELECT id FROM {t} WHERE id IN UNNEST(?) ORDER BY id")
    assert adapter.query(client, dataset, some, ([1, 3],)) == [(1,), (3,)]


@pytest.mark.integration
def test_fetch_columns_reports_bigquery_type_names(bq: Any) -> None:
    adapter, client, dataset = bq
    columns = adapter.fetch_columns(client, dataset, "t")
    assert [(c.name, c.data_type) for c in columns or []] == [
        ("id", "INT64"),
        ("txt", "STRING"),
        ("num", "FLOAT64"),
        ("ts", "TIMESTAMP"),
    ]


@pytest.mark.integration
def test_transactions_share_one_session_and_commit(bq: Any) -> None:
    adapter, client, dataset = bq
    with adapter.transaction(client):
        adapter.execute(client, dataset, INSERT, (1, None, None, None))
    session = client.session_id
    assert session
    with adapter.transaction(client):
        assert adapter.execute(client, dataset, INSERT, (2, None, None, None)) == 1
    assert client.session_id == session and not client.in_transaction
    assert adapter.query(client, dataset, IDS) == [(1,), (2,)]


@pytest.mark.integration
def test_failed_statement_in_transaction_rolls_back_and_raises(bq: Any) -> None:
    adapter, client, dataset = bq
    with pytest.raises(DestinationError):
        with adapter.transaction(client):
            adapter.execute(client, dataset, INSERT, (1, "gone", None, None))
            adapter.execute(client, dataset, INSERT, (None, "violates NOT NULL", None, None))
    assert adapter.query(client, dataset, IDS) == []
    with adapter.transaction(client):  # the session is usable again
        adapter.execute(client, dataset, INSERT, (3, None, None, None))
    assert adapter.query(client, dataset, IDS) == [(3,)]


@pytest.mark.integration
def test_transactions_do_not_nest(bq: Any) -> None:
    adapter, client, dataset = bq
    with pytest.raises(DestinationError, match="nest"):
        with adapter.transaction(client):
            adapter.execute(client, dataset, INSERT, (1, None, None, None))
            with adapter.transaction(client):
                pass  # pragma: no cover - never entered
    assert adapter.query(client, dataset, IDS) == []


@pytest.mark.integration
def test_dataset_is_created_in_the_configured_location(bigquery_emulator: Any) -> None:
    adapter = BigQueryAdapter()
    dataset = f"bqa_eu_{uuid.uuid4().hex[:10]}"
    options = {**bigquery_emulator.connection_options(), "location": "EU"}
    target = ConnectionTarget("bigquery", dataset, Path("/nonexistent"), None, options=options)
    client = adapter.connect(target)
    try:
        adapter.ensure_dataset(client, dataset)
        adapter.ensure_dataset(client, dataset)
        assert client.bq.get_dataset(dataset, timeout=10).location == "EU"
    finally:
        client.bq.delete_dataset(dataset, delete_contents=True, not_found_ok=True, timeout=30)
        adapter.close(client)
