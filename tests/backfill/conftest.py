"""Backfill test projects: a source with one row per day, fault injection, two engines.

``daily`` has one incremental resource (``events``, cursor ``ts``, merge on ``id``) serving
``BF_ROWS_PER_DAY`` rows per day from 2026-01-01 for ``BF_DAYS`` days; ``BF_FAIL_DAYS``
(comma-separated ISO dates) makes the chunk starting on such a day raise, ``BF_SLEEP_S``
sleeps per page (an I/O-bound source), ``BF_HANG_DAYS`` makes the chunk starting on such a day
write ``BF_MARK_DIR/<day>`` and then block forever (a process to kill mid-chunk).
``flat`` has a resource without a cursor.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

DLT_OPS = str(Path(sys.executable).parent / "dlt-ops")

DAILY = '''
import os
import time
from datetime import datetime, timedelta, timezone

import dlt

START = datetime(2026, 1, 1, tzinfo=timezone.utc)


@dlt.resource(primary_key="id", write_disposition="merge")
def events(ts=dlt.sources.incremental("ts", initial_value=START)):
    """BF_ROWS_PER_DAY rows per day, served for the requested window only (like an API)."""
    days = int(os.environ.get("BF_DAYS", "10"))
    per_day = int(os.environ.get("BF_ROWS_PER_DAY", "1"))
    sleep_s = float(os.environ.get("BF_SLEEP_S", "0"))
    lo, hi = ts.start_value, ts.end_value
    if lo.date().isoformat() in os.environ.get("BF_FAIL_DAYS", "").split(","):
        raise RuntimeError(f"injected failure for the chunk starting {lo.isoformat()}")
    if lo.date().isoformat() in os.environ.get("BF_HANG_DAYS", "").split(","):
        mark = os.path.join(os.environ["BF_MARK_DIR"], lo.date().isoformat())
        open(mark, "w").close()
        while True:  # until SIGKILL
            time.sleep(0.05)
    for d in range(days):
        day = START + timedelta(days=d)
        if hi is not None and day >= hi or day + timedelta(days=1) <= lo:
            continue
        if sleep_s:
            time.sleep(sleep_s)
        page = []
        for k in range(per_day):
            at = day + timedelta(minutes=k)
            page.append({"id": f"{day.date()}-{k}", "ts": at, "day": str(day.date()), "k": k})
        yield page


@dlt.source(name="daily")
def daily_source():
    return events
'''

FLAT = """
import dlt


@dlt.resource(write_disposition="replace")
def snapshot():
    yield [{"id": 1}]


@dlt.source(name="flat")
def flat_source():
    return snapshot
"""


@dataclass
class Project:
    """A backfill test project on one engine."""

    root: Path
    engine: str
    dataset: str = "bf_data"
    pg: Any = None
    env: dict[str, str] = field(default_factory=dict)

    def cli(
        self, *args: str, env: dict[str, str] | None = None, timeout: float = 180
    ) -> subprocess.CompletedProcess[str]:  # noqa: E501
        """Run ``dlt-ops --root <root> ...`` in a subprocess (the way users do)."""
        return subprocess.run(
            [DLT_OPS, "--root", str(self.root), *args],
            capture_output=True, text=True, timeout=timeout,
            env={**os.environ, **self.env, **(env or {})},
        )  # fmt: skip

    def popen(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        """Start ``dlt-ops`` without waiting."""
        return subprocess.Popen(
            [DLT_OPS, "--root", str(self.root), *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, **self.env, **(env or {})},
        )  # fmt: skip

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """Read the destination directly (test oracle, outside dlt-ops)."""
        sql = sql.replace("{ds}", self.dataset)
        if self.engine == "duckdb":
            import duckdb

            path = self.root / "daily_pipeline.duckdb"
            # read-write: a SIGKILLed writer may have left a WAL that needs replaying
            with duckdb.connect(str(path)) as conn:
                return conn.execute(sql, list(params)).fetchall()
        import psycopg

        with psycopg.connect(self.pg.url, autocommit=True) as conn:
            return conn.execute(sql.replace("?", "%s"), params).fetchall()

    def table_exists(self, table: str) -> bool:
        rows = self.query(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = ? "
            "AND table_name = ?", self.dataset, table,
        )  # fmt: skip
        return rows[0][0] > 0


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def build_project(root: Path, engine: str, pg: Any = None) -> Project:
    """Write the project files for ``engine`` (``duckdb`` or ``postgres``)."""
    _write(root, ".dlt/config.toml", f"""
        [dlt_ops]
        default_destination = "{engine}"
        default_dataset = "bf_data"

        [sources.daily.dlt_ops]
        schedule = "@daily"

        [sources.flat.dlt_ops]
        schedule = "@daily"
        """)  # fmt: skip
    if pg is not None:
        _write(root, ".dlt/secrets.toml", f'[destination.postgres]\ncredentials = "{pg.dlt_url}"\n')
    _write(root, "pipe/source/daily.py", DAILY)
    _write(root, "pipe/source/flat.py", FLAT)
    (root / "pipe/resource").mkdir(parents=True, exist_ok=True)
    return Project(root=root, engine=engine, pg=pg)


@pytest.fixture
def duckdb_project(tmp_path: Path) -> Project:
    """A backfill project on DuckDB."""
    return build_project(tmp_path / "proj", "duckdb")


@pytest.fixture
def postgres_project(tmp_path: Path, postgres_database: Any) -> Project:
    """A backfill project on a fresh PostgreSQL database."""
    return build_project(tmp_path / "proj", "postgres", postgres_database)


@pytest.fixture(params=["duckdb", "postgres"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Project]:
    """The same project on each engine."""
    if request.param == "duckdb":
        yield build_project(tmp_path / "proj", "duckdb")
        return
    db = request.getfixturevalue("postgres_database")
    yield build_project(tmp_path / "proj", "postgres", db)


Runner = Callable[..., subprocess.CompletedProcess[str]]
