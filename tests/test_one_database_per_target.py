"""Two sources, two DuckDB files, one dataset name: every listing shows both sources.

Each source's tables live in its own file (DuckDB's default ``<pipeline>.duckdb``), both in a
dataset called ``ds``. A listing that keys "where the tables live" by engine and dataset alone
reads one file and answers for both; every command must key by the physical database.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import EVENTS_SOURCE

CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"
"""
SOURCES = ("a_src", "b_src")
WINDOW = ("--from", "2026-01-01T00:00:00Z", "--to", "2026-01-03T00:00:00Z", "--chunk", "1d")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], dict[str, str]]:
    """The project after a run and a backfill of each source: ``(root, run ids, backfill ids)``."""
    from tests.conftest import run_cli, write_project

    root = write_project(
        tmp_path_factory.mktemp("fleet") / "proj", CONFIG, dict.fromkeys(SOURCES, EVENTS_SOURCE)
    )
    runs, backfills = {}, {}
    for source in SOURCES:
        ran = run_cli("pipeline", "run", "-s", source, "-y", "--json", cwd=root)
        assert ran.returncode == 0, ran.stderr[-3000:]
        runs[source] = json.loads(ran.stdout)["run_id"]
        filled = run_cli("pipeline", "backfill", source, *WINDOW, "--json", cwd=root)
        assert filled.returncode == 0, filled.stderr[-3000:]
        listed = run_cli("backfill", "list", "-s", source, "--json", cwd=root)
        assert listed.returncode == 0, listed.stderr[-3000:]
        backfills[source] = json.loads(listed.stdout)[0]["backfill_id"]
    files = sorted(p.name for p in root.glob("*.duckdb"))
    assert files == ["a_src_pipeline.duckdb", "b_src_pipeline.duckdb"]  # two databases
    return root, runs, backfills


def test_status_shows_each_source_from_its_own_file(fleet, cli) -> None:  # noqa: ANN001
    root, runs, _ = fleet
    proc = cli("pipeline", "status", "--json", cwd=root)
    assert proc.returncode == 0, proc.stderr[-2000:]
    by_source = {s["source"]: s for s in json.loads(proc.stdout)}
    for source in SOURCES:
        ids = [r["run_id"] for r in by_source[source]["runs"]]
        assert runs[source] in ids
        assert all(r["source_section"] == source for r in by_source[source]["runs"])


def test_runs_list_shows_both_sources(fleet, cli) -> None:  # noqa: ANN001
    root, runs, _ = fleet
    proc = cli("runs", "list", cwd=root)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for run_id in runs.values():
        assert run_id[:12] in proc.stdout


def test_backfill_list_shows_both_sources_and_show_finds_each(fleet, cli) -> None:  # noqa: ANN001
    root, _, backfills = fleet
    proc = cli("backfill", "list", "--json", cwd=root)
    assert proc.returncode == 0, proc.stderr[-2000:]
    listed = {(d["source"], d["backfill_id"]) for d in json.loads(proc.stdout)}
    assert listed == {(s, b) for s, b in backfills.items()}
    for source, backfill_id in backfills.items():
        shown = cli("backfill", "show", backfill_id, "--json", cwd=root)
        assert shown.returncode == 0, shown.stderr[-2000:]
        doc = json.loads(shown.stdout)
        assert doc["source"] == source and len(doc["chunks"]) == 2


def test_runs_show_finds_the_receipt_of_each_source(fleet, cli) -> None:  # noqa: ANN001
    root, runs, _ = fleet
    for run_id in runs.values():
        proc = cli("runs", "show", run_id, "--json", cwd=root)
        assert proc.returncode == 0, proc.stderr[-2000:]
        doc = json.loads(proc.stdout)
        assert doc["receipt"], doc  # read from the source's own file


def test_report_shows_both_sources_backfills(fleet, cli, tmp_path: Path) -> None:  # noqa: ANN001
    root, runs, backfills = fleet
    out = tmp_path / "fleet.html"
    proc = cli("report", "-o", str(out), cwd=root)
    assert proc.returncode == 0, proc.stderr[-2000:]
    page = out.read_text()
    for source in SOURCES:
        assert runs[source][:12] in page
        assert backfills[source][:12] in page
