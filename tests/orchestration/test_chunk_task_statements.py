"""What a backfill chunk task sends to ``_dlt_backfills`` once the DAG's seed task ran
(issue 38): it claims its chunk through the table (the exactly-once path) and reads the plan
once (the claim decides on the row that read returned); it does not re-create the table or
re-seed the plan, and it does not read the row back after it completed it. A chunk task
without a seed task still seeds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.backfill.conftest import build_project

FROM, TO = "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z"


def _backfills(statements: list[str]) -> list[str]:
    """The statements on ``_dlt_backfills``, by their first word (SELECT, UPDATE, ...)."""
    return [s.split()[0].upper() for s in statements if '"_dlt_backfills"' in s]


def _ddl(statements: list[str]) -> list[str]:
    return [s for s in statements if s.split()[0].upper() in ("CREATE", "ALTER")
            and "_dlt_backfills" in s]  # fmt: skip


@pytest.mark.integration
def test_a_seeded_chunk_task_claims_without_reseeding(
    tmp_path: Path, postgres_database: Any, postgres_statements: list[str]
) -> None:
    from dlt_ops.orchestration import run_backfill_chunk_outcome, seed_backfill

    project = build_project(tmp_path / "proj", "postgres", postgres_database)
    assert seed_backfill(project.root, "daily", FROM, TO, "1d") == [0, 1, 2]
    before = len(postgres_statements)
    out = run_backfill_chunk_outcome(project.root, "daily", FROM, TO, "1d", 1, seeded=True)
    assert (out.outcome, out.status, out.records_loaded) == ("ran", "completed", 1)
    sent = postgres_statements[before:]
    assert _ddl(sent) == []  # the seed task created the table
    # one read of the plan (the claim reuses the chunk's row from it), then claim, running,
    # completed
    assert _backfills(sent) == ["SELECT", "UPDATE", "UPDATE", "UPDATE"]
    statuses = project.query("SELECT status, attempts FROM {ds}._dlt_backfills ORDER BY chunk_from")
    assert statuses == [("pending", 0), ("completed", 1), ("pending", 0)]
    # a cleared task re-run: one read, the chunk is completed, nothing claimed or reloaded
    before = len(postgres_statements)
    again = run_backfill_chunk_outcome(project.root, "daily", FROM, TO, "1d", 1, seeded=True)
    assert (again.outcome, again.status) == ("skipped", "completed")
    assert "UPDATE" not in _backfills(postgres_statements[before:])
    assert project.query("SELECT count(*) FROM {ds}._dlt_ops_runs") == [(1,)]


@pytest.mark.integration
def test_a_chunk_task_whose_row_is_missing_seeds_it(
    tmp_path: Path, postgres_database: Any, postgres_statements: list[str]
) -> None:
    """``seeded=True`` is a promise about the plan, checked: a chunk with no row (the table
    there, this plan never seeded) is seeded first, then claimed and run exactly once."""
    from dlt_ops.orchestration import run_backfill_chunk_outcome, seed_backfill

    project = build_project(tmp_path / "proj", "postgres", postgres_database)
    seed_backfill(project.root, "daily", FROM, "2026-01-02T00:00:00Z", "1d")  # another plan
    out = run_backfill_chunk_outcome(project.root, "daily", FROM, TO, "1d", 2, seeded=True)
    assert (out.outcome, out.status) == ("ran", "completed")
    rows = project.query(
        "SELECT status FROM {ds}._dlt_backfills WHERE backfill_id = %s ORDER BY chunk_from",
        out.backfill_id,
    )
    assert rows == [("pending",), ("pending",), ("completed",)]
