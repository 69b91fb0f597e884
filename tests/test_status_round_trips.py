"""Reading the ledgers of many sources that share one dataset costs a few statements per
dataset, not a few per source (``collect_status`` under status, runs list, report, metrics)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from dlt_ops.adapters import ConnectionTarget, DestinationSession
from dlt_ops.config import load_project_config
from dlt_ops.destinations import project_registry
from dlt_ops.ledger.destination_sink import INSERT_RUN
from dlt_ops.ledger.model import RUNS_TABLE, RunRecord
from dlt_ops.ledger.sinks import LedgerQuery
from dlt_ops.ledger.status import collect_status
from dltops_postgres.adapter import PostgresAdapter

N_SOURCES, RUNS_EACH = 24, 5
T0 = datetime(2026, 3, 1, tzinfo=UTC)
SOURCE = """
import dlt


@dlt.resource(name="rows")
def rows():
    yield [{"id": 1}]


@dlt.source(name="{name}")
def {name}_source():
    return rows
"""


def _record(source: str, i: int) -> RunRecord:
    started = T0 + timedelta(hours=i)
    return RunRecord(
        pipeline_name=f"{source}_pipeline", source_section=source, resource_name=None,
        destination="postgres", dataset="shared", run_id=f"{source}-{i}", dlt_run_id=None,
        backfill_id=None, trigger_source="cli", started_at=started,
        completed_at=started + timedelta(minutes=1), status="completed" if i % 2 else "failed",
        records_extracted=i, records_loaded=i, error_summary=None,
    )  # fmt: skip


@pytest.fixture
def shared_project(tmp_path: Path, postgres_database: Any) -> Path:
    root = tmp_path / "fleet"
    (root / ".dlt").mkdir(parents=True)
    (root / ".dlt" / "config.toml").write_text(
        '[dlt_ops]\ndefault_destination = "postgres"\ndefault_dataset = "shared"\n'
    )
    (root / ".dlt" / "secrets.toml").write_text(
        f'[destination.postgres]\ncredentials = "{postgres_database.dlt_url}"\n'
    )
    source_dir = root / "fleet_pipeline" / "source"
    source_dir.mkdir(parents=True)
    target = ConnectionTarget("postgres", "shared", root, credentials=postgres_database.url)
    with DestinationSession.open(PostgresAdapter(), target) as session:
        session.ensure_table(RUNS_TABLE)
        for n in range(N_SOURCES):
            name = f"src_{n:02d}"
            (source_dir / f"{name}.py").write_text(SOURCE.replace("{name}", name))
            for i in range(RUNS_EACH):
                session.execute(INSERT_RUN, *_record(name, i).values())
    return root


def test_one_dataset_of_many_sources_is_read_in_a_few_statements(
    shared_project: Path, postgres_statements: list[str]
) -> None:
    statements = postgres_statements
    config = load_project_config(shared_project)
    sources = [f"src_{n:02d}" for n in range(N_SOURCES)]
    statuses = collect_status(project_registry(config), config, sources, LedgerQuery("", limit=3))
    assert [s.source for s in statuses] == sources
    for status in statuses:
        assert status.ledger == "ok", status
        assert [r.run_id for r in status.runs] == [f"{status.source}-{i}" for i in (4, 3, 2)]
        assert [r.status for r in status.runs] == ["failed", "completed", "failed"]
    assert len(statements) <= 4, statements  # was 2 per source (columns, then its runs)
    # a filter applies per source, as a single-source read would
    statements.clear()
    only = collect_status(project_registry(config), config, sources,
                          LedgerQuery("", status="completed", limit=10))  # fmt: skip
    assert all([r.run_id for r in s.runs] == [f"{s.source}-3", f"{s.source}-1"] for s in only)
    assert len(statements) <= 4, statements
