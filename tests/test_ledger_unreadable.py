"""An outage never masquerades as an empty history (seed 000).

With the destination down (PostgreSQL not listening), a corrupt DuckDB file or a dataset name no
engine accepts, the readers exit non-zero and say "unreadable" with the reason — never "No runs
recorded", "no runs recorded yet", "no backfills recorded" or ``missing``.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

EMPTY_HISTORY = ("No runs recorded", "no runs recorded", "no backfills recorded")


def _closed_port() -> int:
    with socket.socket() as sock:  # bound then released: nothing listens there
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _postgres_down(make: Callable[..., Path], templates: dict[str, str]) -> Path:
    root = make(
        '[dlt_ops]\ndefault_destination = "postgres"\ndefault_dataset = "ds"\n',
        {"events": templates["events"]},
    )
    url = f"postgresql://postgres:s3cret-pw@127.0.0.1:{_closed_port()}/postgres"
    (root / ".dlt" / "secrets.toml").write_text(f'[destination.postgres]\ncredentials = "{url}"\n')
    return root


def _duckdb_corrupt(make: Callable[..., Path], templates: dict[str, str]) -> Path:
    root = make(
        '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "ds"\n',
        {"events": templates["events"]},
    )
    (root / "events_pipeline.duckdb").write_bytes(b"this is not a duckdb database\n" * 512)
    return root


@pytest.fixture(params=["postgres_down", "duckdb_corrupt"])
def broken(request, project, templates) -> Path:
    make = {"postgres_down": _postgres_down, "duckdb_corrupt": _duckdb_corrupt}[request.param]
    return make(project, templates)


def _assert_unreadable(result, *, exit_nonzero: bool = True) -> None:
    text = result.stdout + result.stderr
    if exit_nonzero:
        assert result.returncode != 0, text
    assert "unreadable" in text, text
    assert not any(phrase in text for phrase in EMPTY_HISTORY), text
    assert "s3cret-pw" not in text


@pytest.mark.parametrize(
    "args",
    [
        ("runs", "list"),
        ("runs", "list", "--json"),
        ("runs", "show", "last"),
        ("runs", "show", "0123456789abcdef"),
        ("backfill", "list"),
        ("backfill", "show", "0123456789abcdef"),
    ],
)
def test_readers_say_unreadable_on_an_outage(broken: Path, cli, args) -> None:
    _assert_unreadable(cli(*args, cwd=broken))


def test_status_fail_on_unreadable_names_the_source(broken: Path, cli) -> None:
    plain = cli("pipeline", "status", cwd=broken)
    _assert_unreadable(plain, exit_nonzero=False)  # a diagnostic: exit 0 unless asked
    assert plain.returncode == 0
    alert = cli("pipeline", "status", "--fail-on", "unreadable", cwd=broken)
    _assert_unreadable(alert)
    assert alert.returncode == 1 and "tripped by events" in alert.stderr


def test_invalid_dataset_is_unreadable_not_missing(project, templates, cli) -> None:
    root = project(
        '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "bad-name"\n',
        {"events": templates["events"]},
    )
    doc = json.loads(cli("pipeline", "status", "--json", cwd=root).stdout)
    assert [(s["ledger"], "bad-name" in (s["error"] or "")) for s in doc] == [("unreadable", True)]
    _assert_unreadable(cli("backfill", "list", "-d", "also bad", cwd=root))
    _assert_unreadable(cli("runs", "list", "--dataset", "bad;name", cwd=root))


def test_dataset_flag_reads_another_dataset(project, templates, cli) -> None:
    root = project(
        '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "main_ds"\n',
        {"events": templates["events"]},
    )
    assert cli("pipeline", "run", "-s", "events", "-d", "other_ds", "-y", cwd=root).returncode == 0
    default = json.loads(cli("pipeline", "status", "--json", cwd=root).stdout)
    assert default[0]["runs"] == []
    other = json.loads(cli("pipeline", "status", "--json", "-d", "other_ds", cwd=root).stdout)
    assert [r["dataset"] for r in other[0]["runs"]] == ["other_ds"]
    listed = json.loads(cli("runs", "list", "--json", "--dataset", "other_ds", cwd=root).stdout)
    assert len(listed) == 1
    shown = cli("runs", "show", "last", "-d", "other_ds", cwd=root)
    assert shown.returncode == 0 and "other_ds" in shown.stdout
