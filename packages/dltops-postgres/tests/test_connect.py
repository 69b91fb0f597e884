"""Connection failures: fast, typed, naming host:port, and never showing the password."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from dlt_ops.adapters import ConnectionTarget
from dlt_ops.cli.errors import handle_errors
from dlt_ops.errors import DestinationError, DestinationUnreachableError, DltOpsError
from dlt_ops.testing.postgres import free_port
from dltops_postgres.adapter import PostgresAdapter
from dltops_postgres.credentials import describe, libpq_params


def _connect(credentials: Any, tmp_path: Path, timeout_s: float = 10.0) -> Any:
    target = ConnectionTarget(
        "postgres", "ds", tmp_path, credentials=credentials, connect_timeout_s=timeout_s
    )
    return PostgresAdapter().connect(target)


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts TCP connections (kernel backlog) but never speaks."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield sock.getsockname()[1]


def test_closed_port_fails_fast_and_names_host_port(role: Any, tmp_path: Path) -> None:
    port = free_port()
    started = time.monotonic()
    with pytest.raises(DestinationUnreachableError) as caught:
        _connect(role.url(port=port), tmp_path)
    assert time.monotonic() - started < 5
    message = str(caught.value)
    assert f"127.0.0.1:{port}" in message
    assert f"postgresql://{role.user}:***@127.0.0.1:{port}/{role.dbname}" in message
    assert role.password not in message
    assert caught.value.exit_code == 1


def test_silent_server_hits_the_connect_timeout(
    role: Any, tmp_path: Path, silent_port: int
) -> None:
    started = time.monotonic()
    with pytest.raises(DestinationUnreachableError, match="within 2 s") as caught:
        _connect(role.url(port=silent_port), tmp_path, timeout_s=2)
    elapsed = time.monotonic() - started
    assert 1.5 <= elapsed < 8, f"connect_timeout not applied: {elapsed:.1f} s"
    assert f"127.0.0.1:{silent_port}" in str(caught.value)


def test_describe_masks_the_password() -> None:
    params = libpq_params("postgresql://bob:hunter2-x@db.example:6543/prod")
    assert describe(params) == "postgresql://bob:***@db.example:6543/prod"
    assert describe(libpq_params({"host": "h", "username": "u"})) == "postgresql://u@h:5432/"


def _failure_credentials(role: Any) -> list[Any]:
    """Every way a connection with the planted password can fail."""
    closed = free_port()
    return [
        role.url(port=closed),  # unreachable
        role.fields(port=closed),  # unreachable, field form
        role.url().replace(role.dbname, "no_such_db"),  # refused by the server
        role.fields(no_such_libpq_option="1"),  # rejected by the driver
        role.url(port=closed).replace(str(closed), "99999"),  # unparsable
        role.url().replace("postgresql", "mysql"),  # wrong scheme
    ]


def _leaks(role: Any, text: str) -> list[str]:
    return [s for s in (role.password, quote(role.password, safe="")) if s in text]


def test_planted_password_never_reaches_errors_or_cli_output(
    role: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    errors: list[DltOpsError] = []
    for credentials in _failure_credentials(role):
        with pytest.raises(DltOpsError) as caught:
            _connect(credentials, tmp_path)
        errors.append(caught.value)
    kinds = {type(e).__name__ for e in errors}
    assert {"DestinationUnreachableError", "DestinationError", "ConfigError"} <= kinds
    for error in errors:
        assert not _leaks(role, str(error) + repr(error.args)), str(error)

    # CLI output: the one-line error and, with --debug, the whole traceback chain.
    for argv in (["dlt-ops"], ["dlt-ops", "--debug"]):
        monkeypatch.setattr(sys, "argv", argv)
        for error in errors:
            with pytest.raises(SystemExit) as exited, handle_errors():
                raise error
            assert exited.value.code == error.exit_code
            out, err = capsys.readouterr()
            assert "error: " in err
            assert not _leaks(role, out + err)


_LOGGING_SCRIPT = """
import json, sys
from pathlib import Path
import structlog
from dlt_ops.adapters import ConnectionTarget
from dlt_ops.cli.errors import handle_errors
from dlt_ops.errors import DltOpsError
from dlt_ops.log import LogFormat, configure_logging
from dltops_postgres.adapter import PostgresAdapter

configure_logging(LogFormat.json, debug=True)
log = structlog.get_logger("probe")
last = None
for credentials in json.loads(sys.argv[1]):
    target = ConnectionTarget("postgres", "ds", Path("."), credentials=credentials)
    try:
        PostgresAdapter().connect(target)
    except DltOpsError as exc:
        log.warning("destination.connect_failed", error=str(exc))
        last = exc
with handle_errors():
    raise last
"""


def test_planted_password_never_reaches_structlog_output(role: Any) -> None:
    """The CLI's real logging pipeline (JSON on stderr, debug level) in a fresh process."""
    attempts = json.dumps(_failure_credentials(role))
    done = subprocess.run(
        [sys.executable, "-c", _LOGGING_SCRIPT, attempts],
        capture_output=True,
        text=True,
        timeout=120,
    )
    events = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    names = [e.get("event") for e in events]
    assert names.count("destination.connect_failed") == 6, done.stderr
    assert "postgres.connect" in names  # the adapter's own debug line went through too
    assert done.returncode == 2 and "error: " in done.stderr  # last failure: a config error
    assert not _leaks(role, done.stdout + done.stderr)


def test_refused_connection_is_a_destination_error(role: Any, tmp_path: Path) -> None:
    with pytest.raises(DestinationError) as caught:
        _connect(role.url().replace(role.dbname, "no_such_db"), tmp_path)
    assert not isinstance(caught.value, DestinationUnreachableError)
    assert 'database "no_such_db" does not exist' in str(caught.value)


@pytest.mark.parametrize(
    ("sslmode", "cause"),
    [
        ("bogus", 'invalid sslmode value: "bogus"'),  # libpq refuses the option itself
        ("require", "server does not support SSL"),  # the test server has no TLS
    ],
)
def test_tls_settings_are_reported_as_the_cause(
    role: Any, tmp_path: Path, sslmode: str, cause: str
) -> None:
    """A wrong ``sslmode`` is a settings problem with its own reason, not 'could not reach'."""
    with pytest.raises(DestinationError) as caught:
        _connect(role.fields(sslmode=sslmode), tmp_path)
    message = str(caught.value)
    assert not isinstance(caught.value, DestinationUnreachableError), message
    assert cause in message and "sslmode" in message, message
    assert "could not reach" not in message and "within" not in message
    assert role.password not in message
