"""Quarantine on a real PostgreSQL server: rejected rows join the ledger by run_id."""

from __future__ import annotations

import json

import pytest

from .conftest import rows

pytestmark = pytest.mark.integration


def test_quarantine_on_postgres(make_project, postgres_database, monkeypatch) -> None:
    import psycopg

    monkeypatch.setenv("DESTINATION__POSTGRES__CREDENTIALS", postgres_database.dlt_url)
    p = make_project("postgres").configure("""
        [sources.src.dlt_ops.assertions.events]
        on_failure = "quarantine"
        unique_columns = ["id"]
        required_columns = ["kind"]
    """)
    p.data(rows(1, 2) + rows(2, 3) + rows(4, kind=None))
    outcome = p.run()
    assert outcome.ok, outcome.error
    with psycopg.connect(postgres_database.url) as con:
        loaded = con.execute("SELECT id FROM ds.events ORDER BY id").fetchall()
        rejected = con.execute(
            "SELECT r.assertion_type, r.violation, r.row_json, u.status, r.rejected_at "
            "FROM ds._dlt_rejected r JOIN ds._dlt_ops_runs u ON u.run_id = r.run_id "
            "ORDER BY r.row_json"
        ).fetchall()
    assert loaded == [(1,), (2,), (3,)]
    assert [(r[0], r[1], json.loads(r[2]), r[3]) for r in rejected] == [
        ("unique_columns", "duplicate key id=2", {"id": 2, "kind": "a"}, "completed"),
        ("required_columns", "missing required column(s): kind", {"id": 4}, "completed"),
    ]
    assert rejected[0][4].tzinfo is not None
