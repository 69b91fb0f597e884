"""Planted secrets, grepped across every output, file and table dlt-ops writes.

Three secrets reach a source the ways dlt hands them out (``.dlt/secrets.toml``, an env var, a
resource argument resolved mid-extract), and the source quotes them in its failures — in a
plain run and in a backfill chunk. Every command a user would then type is run (plain and JSON
logs, ``--debug``), alerts go to a real webhook receiver and to the log sink, the ledger goes to
the destination and to a jsonl file. Not one byte of any secret may appear anywhere.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from ._project import DLT_OPS

SECRETS = ("sk-toml-9d2e7a41", "env-tok-3c5f8b07", "late-pw-6a0b1c2d")

CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"
ledger_sinks = ["destination", "jsonl"]
alert_sinks = ["log", "webhook"]

[dlt_ops.alert_sink.webhook]
url = "{url}"
timeout_seconds = 5

[sources.leaky.dlt_ops]
schedule = "@daily"

[sources.leaky.dlt_ops.assertions.rows]
unique_columns = {{ value = ["a"], on_failure = "quarantine" }}
"""

SOURCE = """
from datetime import datetime, timedelta, timezone

import dlt

START = datetime(2026, 1, 1, tzinfo=timezone.utc)


@dlt.source(name="leaky")
def leaky_source(api_key: str = dlt.secrets.value, other_token: str = dlt.secrets.value):
    @dlt.resource(name="rows", primary_key="id", write_disposition="merge")
    def rows(late_password: str = dlt.secrets.value,
             at=dlt.sources.incremental("at", initial_value=START)):
        lo = at.start_value
        for d in range(3):
            day = START + timedelta(days=d)
            if at.end_value is not None and not (lo <= day < at.end_value):
                continue
            if at.end_value is not None and d == 1:
                raise PermissionError(f"chunk refused: {api_key} {other_token} {late_password}")
            yield [{"id": d * 10 + i, "a": i % 2, "at": day + timedelta(minutes=i)}
                   for i in range(4)]
        if at.end_value is None:
            raise PermissionError(f"run refused: {api_key} {other_token} {late_password}")

    return rows
"""


class _Receiver:
    """A real HTTP server on localhost recording every POSTed body."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                receiver.bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


@pytest.fixture
def receiver() -> Iterator[_Receiver]:
    r = _Receiver()
    yield r
    r.close()


def _leaks(blob: bytes | str) -> list[str]:
    data = blob.encode() if isinstance(blob, str) else blob
    return [s for s in SECRETS if s.encode() in data]


def test_planted_secrets_appear_nowhere(tmp_path: Path, cli, receiver, figures) -> None:  # noqa: ANN001
    root = tmp_path / "proj"
    (root / ".dlt").mkdir(parents=True)
    (root / ".dlt" / "config.toml").write_text(CONFIG.format(url=receiver.url))
    (root / ".dlt" / "secrets.toml").write_text(
        f'[sources.leaky]\napi_key = "{SECRETS[0]}"\n\n'
        f'[sources.leaky.rows]\nlate_password = "{SECRETS[2]}"\n'
    )
    (root / "pl" / "source").mkdir(parents=True)
    (root / "pl" / "source" / "leaky.py").write_text(SOURCE)
    env = {"SOURCES__LEAKY__OTHER_TOKEN": SECRETS[1]}
    window = ("--from", "2026-01-01T00:00:00Z", "--to", "2026-01-04T00:00:00Z", "--chunk", "1d")
    commands = [
        ("pipeline", "run", "-s", "leaky", "-y"),
        ("--log-format", "json", "pipeline", "run", "-s", "leaky", "-y"),
        ("--debug", "--log-format", "console", "pipeline", "run", "-s", "leaky", "-y"),
        ("pipeline", "backfill", "leaky", *window, "--continue-on-error"),
        ("--log-format", "json", "pipeline", "backfill", "leaky", *window),
        ("pipeline", "validate"),
        ("pipeline", "status"),
        ("pipeline", "status", "--json"),
        ("runs", "list"),
        ("runs", "list", "--json"),
        ("runs", "show", "last"),
        ("runs", "show", "last", "--json"),
        ("backfill", "list"),
        ("backfill", "list", "--json"),
        ("plugins", "doctor"),
    ]
    outputs = 0
    failed_as_expected = 0
    for args in commands:
        proc = cli(*args, cwd=root, env=env)
        outputs += 2
        assert "Traceback" not in proc.stderr or "--debug" in args, (args, proc.stderr[-1500:])
        for stream, text in (("stdout", proc.stdout), ("stderr", proc.stderr)):
            leaked = _leaks(text)
            figures.leaked += len(leaked)
            assert not leaked, (args, stream, leaked, text[-1500:])
        if "run" in args or "backfill" in args[:4]:
            failed_as_expected += proc.returncode == 1
    assert failed_as_expected == 5, "the planted failures (3 runs, 2 backfills) did not happen"

    files = [p for p in root.rglob("*") if p.is_file() and p != root / ".dlt" / "secrets.toml"]
    for path in files:
        leaked = _leaks(path.read_bytes())
        figures.leaked += len(leaked)
        assert not leaked, (str(path.relative_to(root)), leaked)

    import duckdb

    with duckdb.connect(str(root / "leaky_pipeline.duckdb"), read_only=True) as con:
        tables = con.execute("SELECT table_schema, table_name FROM information_schema.tables")
        dump = {
            f"{s}.{t}": str(con.execute(f'SELECT * FROM "{s}"."{t}"').fetchall())
            for s, t in tables.fetchall()
        }
    for name in ("ds._dlt_ops_runs", "ds._dlt_ops_receipts", "ds._dlt_backfills"):
        assert name in dump, f"{name} was never written: the test would prove nothing"
    for name, text in dump.items():
        leaked = _leaks(text)
        figures.leaked += len(leaked)
        assert not leaked, (name, leaked)

    assert receiver.bodies, "no alert reached the webhook"
    for body in receiver.bodies:
        json.loads(body)  # one JSON document per alert
        leaked = _leaks(body)
        figures.leaked += len(leaked)
        assert not leaked, body[:500]
    figures.trials = 1
    figures.notes.append(
        f"{len(commands)} commands ({outputs} streams), {len(files)} files, {len(dump)} tables, "
        f"{len(receiver.bodies)} webhook bodies grepped for 3 secrets"
    )
    figures.check()
    assert DLT_OPS  # the suite's CLI path is the one these commands ran
