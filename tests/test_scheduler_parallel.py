"""``scheduler run --once --max-parallel N`` on PostgreSQL (issue 37): runs in their own
processes, the first load into a new dataset taken in turn, every source completed once.

Twelve due sources share two brand-new datasets (six each) on a fresh database, so their first
loads race for the dataset's schemas and dlt's ``_dlt_version`` / ``_dlt_pipeline_state``
tables (on the previous main: ``UniqueViolation ... pg_type_typname_nsp_index`` and
``DuplicateSchema`` in 1-2 of 12 runs per pass); the modules import more of dlt than the
scheduler did (threads of one process raced on dlt's module-level state there).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli, write_project

SOURCES = [f"s{k:02d}" for k in range(12)]
ROWS = 5

#: Each source its own table (``rows_<source>``), so "each row once" is per source.
MODULE = """
import dlt
from dlt.sources.helpers import requests  # noqa: F401 - a first import inside the run
from dlt.sources.rest_api import rest_api_source  # noqa: F401

ROWS = {rows}


@dlt.resource(name="rows_{name}", primary_key="id", write_disposition="merge")
def rows():
    yield [{"id": i, "source": "{name}"} for i in range(ROWS)]


@dlt.source(name="{name}")
def {name}_source():
    return rows
"""


def _project(root: Path, url: str, round_: int) -> Path:
    config = '[dlt_ops]\ndefault_destination = "postgres"\n\n'
    for k, name in enumerate(SOURCES):
        config += f'[sources.{name}.dlt_ops]\nschedule = "@hourly"\n'
        config += f'dataset = "r{round_}_ds{k % 2}"\n\n'
    write_project(root, config, {name: MODULE.replace("{rows}", str(ROWS)) for name in SOURCES})
    (root / ".dlt" / "secrets.toml").write_text(f'[destination.postgres]\ncredentials = "{url}"\n')
    return root


def _query(db: Any, sql: str) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(db.url, autocommit=True) as conn:
        return conn.execute(sql).fetchall()


@pytest.mark.integration
@pytest.mark.parametrize("round_", [0, 1])
def test_max_parallel_4_completes_twelve_new_sources_once(
    round_: int, postgres_database: Any, tmp_path: Path
) -> None:
    root = _project(tmp_path / "proj", postgres_database.dlt_url, round_)
    done = run_cli("scheduler", "run", "--once", "--max-parallel", "4", "--json", cwd=root,
                   timeout=400)  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-4000:]
    ticks = json.loads(done.stdout)
    assert sorted(t["source"] for t in ticks) == SOURCES
    assert [t["status"] for t in ticks] == ["completed"] * 12, ticks
    assert "Fix the module" not in done.stderr
    ledger = []
    for k in range(2):
        sql = f"SELECT source_section, run_id, status FROM r{round_}_ds{k}._dlt_ops_runs"
        ledger += _query(postgres_database, sql)
    assert sorted(s for s, _, _ in ledger) == SOURCES  # one ledger row per source
    assert {st for _, _, st in ledger} == {"completed"}
    assert Counter(r for _, r, _ in ledger) == Counter({t["run_id"]: 1 for t in ticks})
    for k, name in enumerate(SOURCES):
        table = f"r{round_}_ds{k % 2}.rows_{name}"
        rows = _query(postgres_database, f"SELECT id, count(*) FROM {table} GROUP BY id ORDER BY 1")
        assert rows == [(i, 1) for i in range(ROWS)], (name, rows)
    again = run_cli("scheduler", "run", "--once", "--max-parallel", "4", cwd=root)
    assert again.returncode == 0 and again.stdout.strip() == "nothing due.", again.stderr[-3000:]


#: Imports cleanly on its own (the import-safety check, ``validate``); raises once at import
#: in the run's process while ``FAIL_ONCE`` names an existing file (then removes it).
FLAKY_IMPORT = """
import os
from pathlib import Path

import dlt

_mark = Path(os.environ.get("FAIL_ONCE", "/nonexistent"))
if _mark.exists():
    _mark.unlink()
    raise AttributeError("'NoneType' object has no attribute '__name__'")


@dlt.resource(name="rows", primary_key="id", write_disposition="merge")
def rows():
    yield [{"id": 1}]


@dlt.source(name="{name}")
def {name}_source():
    return rows
"""


def test_import_failure_in_the_run_process_is_retried_and_not_blamed_on_the_module(
    project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from datetime import UTC, datetime

    import duckdb

    from dlt_ops.config import load_project_config
    from dlt_ops.destinations import project_registry
    from dlt_ops.scheduler.service import run_due

    config = '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "ds"\n\n'
    config += '[sources.flaky.dlt_ops]\nschedule = "@hourly"\n'
    root = project(config, {"flaky": FLAKY_IMPORT})
    checked = run_cli("pipeline", "validate", cwd=root)  # the module imports cleanly: its
    # resource is judged (a rule about its columns), nothing about importing it
    assert "[flaky] resource.rows" in checked.stdout, checked.stdout[-2000:] + checked.stderr
    assert "import" not in checked.stdout, checked.stdout[-2000:]
    mark = tmp_path / "fail-once"
    mark.write_text("x")
    monkeypatch.setenv("FAIL_ONCE", str(mark))
    cfg = load_project_config(root)
    now = datetime(2026, 3, 4, 10, 37, tzinfo=UTC)
    (tick,) = run_due(project_registry(cfg), cfg, now=now)
    assert (tick.status, tick.attempts, tick.error) == ("completed", 2, None)
    with duckdb.connect(str(root / "flaky_pipeline.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT status, error_summary FROM ds._dlt_ops_runs "
                           "ORDER BY started_at").fetchall()  # fmt: skip
    assert [status for status, _ in rows] == ["failed", "completed"]
    failed = rows[0][1]
    assert "imports cleanly" in failed and "'NoneType' object has no attribute" in failed, failed
    assert "Fix the module" not in failed


def test_sources_sharing_one_duckdb_file_take_turns(project) -> None:  # noqa: ANN001
    # one writing process per DuckDB file: with --max-parallel the two sources share a lane
    import duckdb

    config = '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "ds"\n\n'
    config += '[destination.duckdb]\ncredentials = "shared.duckdb"\n\n'
    for name in ("one", "two", "three"):
        config += f'[sources.{name}.dlt_ops]\nschedule = "@hourly"\n\n'
    root = project(config, {n: MODULE.replace("{rows}", "3") for n in ("one", "two", "three")})
    done = run_cli("scheduler", "run", "--once", "--max-parallel", "3", "--json", cwd=root)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert [t["status"] for t in json.loads(done.stdout)] == ["completed"] * 3
    with duckdb.connect(str(root / "shared.duckdb"), read_only=True) as con:
        ledger = con.execute("SELECT source_section, status FROM ds._dlt_ops_runs").fetchall()
        counts = [con.execute(f"SELECT count(*) FROM ds.rows_{n}").fetchone() for n in ("one",)]
    assert sorted(ledger) == [("one", "completed"), ("three", "completed"), ("two", "completed")]
    assert counts == [(3,)]
