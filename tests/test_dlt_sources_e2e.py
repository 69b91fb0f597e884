"""dlt's own sources under dlt-ops, end to end through the real CLI, on the example project.

* sql_database: a PostgreSQL ``orders`` table (the suite's own server) into DuckDB, with the
  default and the ``pyarrow`` backend: a plain run, then a ``--chunk 1d`` backfill;
* rest_api: a local paginated HTTP API whose page 4 fails; the re-run resumes from the
  ``rest_api_checkpoints`` checkpoint;
* filesystem: CSV files in a folder, incremental on their modification time.

Every load is checked by exact per-day row counts and by the receipts reconciling.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import duckdb
import pytest

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "dlt_sources"
CLI = "import sys; sys.argv = ['dlt-ops', *sys.argv[1:]]; from dlt_ops.cli import main; main()"
DATASET = "demo_raw"


def _demo_data() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dlt_sources_demo_data", EXAMPLE / "demo_data.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


demo = _demo_data()


class Example:
    """A fresh copy of the example project and the real CLI on it."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self.root, self.env = root, env

    def cli(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", CLI, "--root", str(self.root), *args],
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    def run(self, source: str, **env: str) -> subprocess.CompletedProcess[str]:
        return self.cli("pipeline", "run", "-s", source, "-y", **env)

    def receipt(self, source: str) -> list[dict[str, Any]]:
        """The last run's receipt rows, each checked to reconcile."""
        shown = self.cli("runs", "show", "last", "-s", source, "--json")
        assert shown.returncode == 0, shown.stderr[-2000:]
        rows = json.loads(shown.stdout)["receipt"]
        for row in rows:
            assert reconciled(row), f"receipt does not reconcile: {row}"
        return rows

    def checkpoints(self, source: str) -> list[dict[str, Any]]:
        """The rows of the checkpoint table (read directly: one CLI start less per look)."""
        db = self.root / f"{source}_pipeline.duckdb"
        with duckdb.connect(str(db), read_only=True) as con:
            cur = con.execute(
                f"SELECT status, page_number, checkpoint_value FROM "
                f"{DATASET}._dlt_custom_checkpoints ORDER BY created_at"
            )
            names = [d[0] for d in cur.description]
            return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    def per_day(
        self, source: str, table: str, column: str, dataset: str = DATASET
    ) -> dict[str, int]:
        """Rows per UTC day of ``column`` (a timestamp, or a date string)."""
        db = self.root / f"{source}_pipeline.duckdb"
        with duckdb.connect(str(db), read_only=True) as con:
            con.execute("SET TimeZone = 'UTC'")
            rows = con.execute(
                f"SELECT strftime(CAST({column} AS DATE), '%Y-%m-%d') AS day, count(*) "
                f"FROM {dataset}.{table} GROUP BY day ORDER BY day"
            ).fetchall()
        return dict(rows)


def reconciled(row: dict[str, Any]) -> bool:
    """``records_in = filtered + rejected + failed + records_out`` (docs/receipts.md)."""
    parts = row["filtered"] + row["rejected"] + row["failed"] + row["records_out"]
    return bool(row["records_in"] == parts)


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCES__", "DESTINATION"))}
    env.update(
        RUNTIME__DLTHUB_TELEMETRY="false",
        DLT_DATA_DIR=str(tmp_path / "dlt-data"),
        RUNTIME__REQUEST_MAX_ATTEMPTS="1",  # a failing page fails now, not after backoff
    )
    return env


@pytest.fixture
def example(tmp_path: Path) -> Example:
    root = tmp_path / "example"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".dlt-ops", "*.duckdb*"))
    return Example(root, _env(tmp_path))


@pytest.fixture
def scaffold(tmp_path: Path):  # noqa: ANN201
    """``scaffold(kind)`` → an ``init --source kind`` project (``Example`` on it)."""

    def make(kind: str) -> Example:
        from dlt_ops.project.scaffold import init_project

        project = Example(tmp_path / kind, _env(tmp_path))
        init_project(project.root, source=kind)  # the CLI's own call (its flags: unit tests)
        return project

    return make


def _days(stamps: list[datetime]) -> dict[str, int]:
    return dict(sorted(Counter(s.strftime("%Y-%m-%d") for s in stamps).items()))


# -- sql_database ------------------------------------------------------------------------------

ORDERS_BY_DAY = {
    (demo.DAY0 + timedelta(days=i)).strftime("%Y-%m-%d"): n
    for i, n in enumerate(demo.ORDERS_PER_DAY)
}


@pytest.fixture
def shop(example: Example, postgres_database: Any) -> Example:
    demo.seed_postgres(postgres_database.url)
    example.env["SOURCES__SHOP__CREDENTIALS"] = postgres_database.dlt_url
    return example


@pytest.mark.parametrize("backend", ["sqlalchemy", "pyarrow"])
def test_sql_database_run_and_daily_backfill(shop: Example, backend: str, tmp_path: Path) -> None:
    shop.env["SOURCES__SHOP__BACKEND"] = backend
    run = shop.run("shop")
    assert run.returncode == 0, run.stderr[-3000:]
    assert shop.per_day("shop", "orders", "updated_at") == ORDERS_BY_DAY
    (row,) = shop.receipt("shop")  # pyarrow: an Arrow table counts its rows, not 1
    assert row["rows_loaded"] == row["records_out"] == sum(demo.ORDERS_PER_DAY)

    # the same window again as a daily backfill, on a fresh destination and local state
    (shop.root / "shop_pipeline.duckdb").unlink()
    shutil.rmtree(shop.root / ".dlt-ops")
    args = ["pipeline", "backfill", "shop", "--from", "2026-01-01T00:00:00Z",
            "--to", "2026-01-06T00:00:00Z", "--chunk", "1d"]  # fmt: skip
    done = shop.cli(*args, "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout)
    assert shop.per_day("shop", "orders", "updated_at") == ORDERS_BY_DAY
    with duckdb.connect(str(shop.root / "shop_pipeline.duckdb"), read_only=True) as con:
        chunks = con.execute(
            f"SELECT records_loaded FROM {DATASET}._dlt_backfills ORDER BY chunk_id"
        ).fetchall()
    assert [n for (n,) in chunks] == list(demo.ORDERS_PER_DAY)  # one day per chunk, exactly
    shown = shop.cli("backfill", "show", summary["backfill_id"], "-s", "shop", "--json")
    assert shown.returncode == 0, shown.stderr[-2000:]
    (receipt,) = json.loads(shown.stdout)["receipt"]
    assert receipt["rows_loaded"] == receipt["records_out"] == sum(demo.ORDERS_PER_DAY)
    assert reconciled(receipt), f"receipt does not reconcile: {receipt}"


def test_backfill_without_datetime_initial_value_is_refused_before_any_write(
    shop: Example,
) -> None:
    module = shop.root / "database" / "source" / "shop.py"
    module.write_text(
        module.read_text().replace(
            'dlt.sources.incremental("updated_at", initial_value=START)',
            'dlt.sources.incremental("updated_at")',
        )
    )
    listed = shop.cli("pipeline", "resources", "-s", "shop")
    assert "• orders (discovered at run time)" in listed.stdout, listed.stdout + listed.stderr
    validated = shop.cli("pipeline", "validate")
    assert "Resource 'orders' cannot be backfilled" in validated.stdout + validated.stderr
    args = ["pipeline", "backfill", "shop", "--from", "2026-01-01T00:00:00Z",
            "--to", "2026-01-03T00:00:00Z", "--chunk", "1d"]  # fmt: skip
    for extra in (["--dry-run"], []):
        refused = shop.cli(*args, *extra)
        assert refused.returncode == 2, refused.stderr[-2000:]
        assert "resource 'orders'" in refused.stderr
        assert "give initial_value a datetime" in refused.stderr
    assert not (shop.root / "shop_pipeline.duckdb").exists()  # no state, no ledger, no data


# -- rest_api ----------------------------------------------------------------------------------


def test_rest_api_page_failure_resumes_from_checkpoint(example: Example) -> None:
    events = demo.events()
    with demo.serving(fail_page=4) as api:
        env = {"SOURCES__EVENTS_API__BASE_URL": api.url}
        failed = example.run("events_api", **env)
        assert failed.returncode == 1
        assert "500 Server Error" in failed.stderr
        (row,) = example.receipt("events_api")
        assert row["records_in"] == 3 * demo.PAGE_SIZE and row["rows_loaded"] == 0

        (checkpoint,) = example.checkpoints("events_api")
        assert checkpoint["status"] == "active" and checkpoint["page_number"] == 2
        resume_at = datetime.fromisoformat(checkpoint["checkpoint_value"])
        assert resume_at == datetime.fromisoformat(events[2 * demo.PAGE_SIZE - 1]["updated_at"])

        api.fail_page, api.requests[:] = None, []
        resumed = example.run("events_api", **env)
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        # the API was asked from the checkpoint (minus the 1 s overlap), not from the start
        since = {datetime.fromisoformat(r["since"]) for r in api.requests}
        assert since == {resume_at - timedelta(seconds=1)}

    expected = [datetime.fromisoformat(e["updated_at"]) for e in events]
    expected = [at for at in expected if at >= resume_at]
    assert example.per_day("events_api", "events", "updated_at") == _days(expected)
    (row,) = example.receipt("events_api")
    assert row["records_in"] == row["rows_loaded"] == len(expected)
    assert {c["status"] for c in example.checkpoints("events_api")} == {"completed"}


def test_rest_api_resume_books_its_span_and_the_printed_backfill_recovers_it(
    example: Example,
) -> None:
    import shlex

    events = demo.events()
    with demo.serving(fail_page=4) as api:
        env = {"SOURCES__EVENTS_API__BASE_URL": api.url}
        assert example.run("events_api", **env).returncode == 1
        api.fail_page = None
        resumed = example.run("events_api", **env)
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        shown = example.cli("runs", "show", "last", "-s", "events_api", "--json")
        (resume,) = json.loads(shown.stdout)["resumes"]
        assert resume["resource"] == "events" and resume["skipped_from"] == demo.DAY0.isoformat()
        (row,) = json.loads(shown.stdout)["receipt"]
        assert (row["skipped_from"], row["resumed_from"]) == (
            resume["skipped_from"], resume["resumed_from"]
        )  # fmt: skip
        text = example.cli("runs", "show", "last", "-s", "events_api").stdout
        assert f"load it with: {resume['recover']}" in text
        backfill = example.cli(*shlex.split(resume["recover"])[1:], "-y", **env)
        assert backfill.returncode == 0, backfill.stderr[-3000:]
    # append: the backfill stops where the resume began, so each event lands once
    stamps = [datetime.fromisoformat(e["updated_at"]) for e in events]
    assert example.per_day("events_api", "events", "updated_at") == _days(stamps)
    db = example.root / "events_api_pipeline.duckdb"
    with duckdb.connect(str(db), read_only=True) as con:
        ids = con.execute(f"SELECT count(*), count(DISTINCT id) FROM {DATASET}.events").fetchone()
    assert ids == (len(events), len(events))


# -- filesystem --------------------------------------------------------------------------------


def test_filesystem_csv_incremental_on_modification_time(example: Example, tmp_path: Path) -> None:
    folder = tmp_path / "csv"
    demo.write_csv_files(folder)
    env = {"SOURCES__CSV_FILES__BUCKET_URL": str(folder)}
    first = example.run("csv_files", **env)
    assert first.returncode == 0, first.stderr[-3000:]
    by_day = {name[7:17]: rows for name, rows, _ in demo.CSV_FILES}
    assert example.per_day("csv_files", "orders", "day") == by_day
    (row,) = example.receipt("csv_files")
    assert row["rows_loaded"] == sum(by_day.values())

    # a new file, modified later: only its rows load; the old files are not read again
    demo.write_csv(folder, "orders_2026-01-04.csv", 5, demo.DAY0 + timedelta(days=3, hours=23))
    second = example.run("csv_files", **env)
    assert second.returncode == 0, second.stderr[-3000:]
    assert example.per_day("csv_files", "orders", "day") == {**by_day, "2026-01-04": 5}
    (row,) = example.receipt("csv_files")
    assert row["records_in"] == row["rows_loaded"] == 5


# -- init --source: the scaffolds run once their placeholders are filled in --------------------


def test_init_sql_database_runs_once_credentials_are_filled_in(
    scaffold: Any, postgres_database: Any
) -> None:
    demo.seed_postgres(postgres_database.url)  # the template's defaults: orders / updated_at
    project = scaffold("sql_database")
    secrets = project.root / ".dlt" / "secrets.toml"
    text = secrets.read_text()
    assert "CHANGE_ME" in text
    secrets.write_text(
        text.replace("postgresql://loader:CHANGE_ME@localhost:5432/shop", postgres_database.dlt_url)
    )
    run = project.run("database")
    assert run.returncode == 0, run.stderr[-3000:]
    assert project.per_day("database", "orders", "updated_at", "raw_data") == ORDERS_BY_DAY


def test_init_filesystem_reads_the_project_data_folder(scaffold: Any) -> None:
    project = scaffold("filesystem")
    demo.write_csv_files(project.root / "data")
    run = project.run("files")  # from another cwd: the folder is the project's
    assert run.returncode == 0, run.stderr[-3000:]
    by_day = {name[7:17]: rows for name, rows, _ in demo.CSV_FILES}
    assert project.per_day("files", "rows", "day", "raw_data") == by_day


def test_init_rest_api_runs_against_an_api_once_filled_in(scaffold: Any) -> None:
    project = scaffold("rest_api")
    module = project.root / "my_pipeline" / "source" / "api.py"
    # what a user adapts: the model gains the API's other field
    module.write_text(module.read_text().replace("    id: int\n", "    id: int\n    kind: str\n"))
    with demo.serving() as api:
        run = project.run("api", SOURCES__API__BASE_URL=api.url, SOURCES__API__TOKEN="t0ken")
        assert run.returncode == 0, run.stderr[-3000:]
        assert {r["page"] for r in api.requests} == {"1", "2", "3", "4", "5", "6"}
    stamps = [datetime.fromisoformat(e["updated_at"]) for e in demo.events()]
    assert project.per_day("api", "events", "updated_at", "raw_data") == _days(stamps)
