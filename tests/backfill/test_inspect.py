"""``backfill list`` / ``backfill show`` read the state back; ``--help`` stays cheap."""

from __future__ import annotations

import json
import subprocess
import sys

from dlt_ops.backfill.plan import BackfillPlan
from tests.conftest import age_databases, imported_modules

FROM, TO = "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z"


def test_list_and_show(duckdb_project) -> None:
    empty = duckdb_project.cli("backfill", "list", "--json")
    assert empty.returncode == 0 and json.loads(empty.stdout) == []
    failing = duckdb_project.cli(
        "pipeline", "backfill", "daily", "--from", FROM, "--to", TO, "--chunk", "1d",
        "--continue-on-error", env={"BF_FAIL_DAYS": "2026-01-02"},
    )  # fmt: skip
    assert failing.returncode == 1
    bid = BackfillPlan.build("daily", FROM, TO, "1d").backfill_id
    listed = json.loads(duckdb_project.cli("backfill", "list", "-s", "daily", "--json").stdout)
    assert [(d["backfill_id"], d["chunk"], d["total"]) for d in listed] == [(bid, "1d", 3)]
    assert listed[0]["by_status"]["completed"] == 2 and listed[0]["by_status"]["failed"] == 1
    assert abs(listed[0]["coverage"] - 2 / 3) < 1e-9
    shown = json.loads(duckdb_project.cli("backfill", "show", bid, "--json").stdout)
    chunks = {c["chunk_id"]: c for c in shown["chunks"]}
    assert chunks["000001"]["status"] == "failed" and chunks["000001"]["attempts"] == 1
    assert "injected failure" in chunks["000001"]["last_error"]
    assert chunks["000000"]["records_loaded"] == 1 and chunks["000000"]["claimed_by"]
    text = duckdb_project.cli("backfill", "show", bid)
    assert text.returncode == 0 and "coverage 67%" in text.stdout and "failed" in text.stdout
    table = duckdb_project.cli("backfill", "list")
    assert bid in table.stdout and "2/3" in table.stdout
    missing = duckdb_project.cli("backfill", "show", "0000000000000000")
    assert missing.returncode == 2 and "no backfill" in missing.stderr


def test_help_imports_no_dlt_or_drivers() -> None:
    code = (
        "import sys; from dlt_ops.cli import app; "
        "bad = [m for m in ('dlt', 'duckdb', 'psycopg', 'dlt_ops.backfill.service') "
        "if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _listed(project) -> tuple[list[dict], bool]:  # noqa: ANN001
    """``backfill list --json`` and whether that process imported the DuckDB driver."""
    proc = project.cli("backfill", "list", "--json", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout), "duckdb" in imported_modules(proc.stderr)


def test_list_answers_a_quiet_database_from_the_read_cache(duckdb_project) -> None:
    """Like `status`, `backfill list` reads an unchanged DuckDB file once, then answers from
    the project's read cache without the driver; any later write is seen at once."""
    first = duckdb_project.cli("pipeline", "backfill", "daily", "--from", FROM, "--to", TO,
                               "--chunk", "1d")  # fmt: skip
    assert first.returncode == 0, first.stderr[-2000:]
    age_databases(duckdb_project.root)
    read, loaded = _listed(duckdb_project)
    assert loaded and [d["total"] for d in read] == [3]
    cached, loaded = _listed(duckdb_project)
    assert not loaded and cached == read
    second = duckdb_project.cli("pipeline", "backfill", "daily", "--from", TO,
                                "--to", "2026-01-06T00:00:00Z", "--chunk", "1d")  # fmt: skip
    assert second.returncode == 0, second.stderr[-2000:]
    after, loaded = _listed(duckdb_project)
    assert loaded and sorted(d["total"] for d in after) == [2, 3]
