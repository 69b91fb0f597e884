"""The reusable emulator fixture (``dlt_ops.testing.bigquery``): venv creation under races,
readiness parsing, skip-or-fail policy, and the running server itself."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from dlt_ops.testing import bigquery as emu


def test_rest_listen_line_gives_the_port() -> None:
    line = json.dumps({"host": "127.0.0.1", "port": 41577, "event": "rest.listen"})
    assert emu._listen_port(line) == 41577
    assert emu._listen_port(json.dumps({"port": 1, "event": "grpc.listen"})) is None
    assert emu._listen_port("Uvicorn running on http://127.0.0.1:41577") is None


def test_racing_processes_build_the_venv_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds: list[Path] = []
    both_started = threading.Barrier(2)

    def fake_build(venv: Path, home: Path) -> None:
        builds.append(venv)
        (venv / "bin").mkdir(parents=True)

    monkeypatch.setattr(emu, "_build", fake_build)
    results: list[Path] = []

    def worker() -> None:
        both_started.wait()
        results.append(emu.ensure_emulator_venv(tmp_path))

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(builds) == 1
    assert results == [tmp_path / "venv"] * 2
    assert (tmp_path / "venv" / emu._READY_MARKER).exists()


def test_half_built_venv_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "venv" / "leftover"
    stale.parent.mkdir(parents=True)
    stale.write_text("killed mid-install")
    monkeypatch.setattr(emu, "_build", lambda venv, home: venv.mkdir(parents=True))
    emu.ensure_emulator_venv(tmp_path)
    assert not stale.exists() and (tmp_path / "venv" / emu._READY_MARKER).exists()


def test_venv_from_an_older_recipe_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "venv").mkdir()
    (tmp_path / "venv" / emu._READY_MARKER).write_text("bqemulator[all]==1.3.0\n")
    builds: list[Path] = []
    monkeypatch.setattr(emu, "_build", lambda venv, home: builds.append(venv) or venv.mkdir())
    emu.ensure_emulator_venv(tmp_path)
    emu.ensure_emulator_venv(tmp_path)
    assert builds == [tmp_path / "venv"]


@pytest.mark.parametrize(("ci", "outcome"), [("true", pytest.fail.Exception), ("", None)])
def test_unavailable_emulator_fails_under_ci_and_skips_otherwise(
    monkeypatch: pytest.MonkeyPatch, ci: str, outcome: Any
) -> None:
    def broken(*args: object, **kwargs: object) -> Any:
        raise emu.EmulatorUnavailableError("uv pip install failed")

    monkeypatch.setattr(emu, "run_bigquery_emulator", broken)
    monkeypatch.setenv("CI", ci)
    expected = outcome or pytest.skip.Exception
    with pytest.raises(expected, match="uv pip install failed"):
        next(emu.emulator_fixture())


@pytest.mark.integration
def test_session_emulator_is_alive_and_answers(bigquery_emulator: Any) -> None:
    assert bigquery_emulator.alive()
    assert bigquery_emulator.emulator_host.startswith("http://127.0.0.1:")
    client = bigquery_emulator.client()
    try:
        rows = list(client.query("SELECT 41 + 1 AS answer").result(timeout=30))
        assert [r["answer"] for r in rows] == [42]
    finally:
        client.close()


@pytest.mark.integration
def test_context_manager_stops_the_server(bigquery_emulator: Any) -> None:
    # bigquery_emulator: only to share its skip/fail policy when the emulator cannot start.
    with emu.run_bigquery_emulator(project="other-project") as second:
        assert second.alive() and second.port != bigquery_emulator.port
        assert second.connection_options()["project"] == "other-project"
    assert not second.alive()
    assert second.process.returncode is not None
