"""A webhook URL that is not http(s) is caught where the project is checked, not when the first
alert is sent: a validate finding, and a run refused with exit 2 before anything is written."""

from __future__ import annotations

import json

import pytest

from tests.conftest import EVENTS_ON_DUCKDB, EVENTS_SOURCE, write_project

URLS = ["file:///etc/passwd", "ftp://hooks.example.com/x", "hooks.example.com/x", ""]


def _project(tmp_path, url: str):  # noqa: ANN001, ANN202
    config = EVENTS_ON_DUCKDB.replace(
        'default_dataset = "ds"\n',
        f'default_dataset = "ds"\nalert_sinks = ["webhook"]\n\n[dlt_ops.alert_sink.webhook]\n'
        f'url = "{url}"\n',
    )
    return write_project(tmp_path / "proj", config, {"events_src": EVENTS_SOURCE})


@pytest.mark.parametrize("url", URLS)
def test_validate_finds_it(tmp_path, cli, url) -> None:  # noqa: ANN001
    root = _project(tmp_path, url)
    done = cli("pipeline", "validate", "--json", cwd=root)
    assert done.returncode == 1, done.stderr[-3000:]
    found = [f for f in json.loads(done.stdout) if f["rule"] == "alert_sink_registered"]
    assert len(found) == 1 and "must be an http(s) URL" in found[0]["message"], found
    (tmp_path / "ok").mkdir()
    good = cli(
        "pipeline", "validate", "--json", cwd=_project(tmp_path / "ok", "https://h.example/x")
    )
    assert not [f for f in json.loads(good.stdout) if f["rule"] == "alert_sink_registered"]


@pytest.mark.parametrize("url", URLS)
def test_a_run_refuses_it_and_writes_nothing(tmp_path, cli, url) -> None:  # noqa: ANN001
    root = _project(tmp_path, url)
    done = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    assert done.returncode == 2, done.stderr[-3000:]
    assert "url must be an http(s) URL" in done.stderr
    assert "Traceback" not in done.stderr
    assert not list(root.glob("*.duckdb"))  # no ledger row, no data
