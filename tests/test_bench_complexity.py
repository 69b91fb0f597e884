"""The scale rows of bench/run_all.py keep their complexity (issue #33's smoke lane).

Seconds on a shared machine say little; what makes a fleet-wide command slow at a thousand
sources is work per source. So this counts, on tiny fleets, what a regression would multiply:
the statements each reader sends to one PostgreSQL dataset all its sources share (counted at
``PostgresAdapter._run``, the adapter's one way to the server) and the modules ``pipeline
status`` imports. Both must be the same for 5 sources as for 40; every command runs the real
CLI in a fresh interpreter.

On DuckDB each source has a ledger file of its own, so a reader's work grows with the sources
by design; what must not grow is what it pays *per source* beyond that: the files it opens and
the Python function calls it makes (counted with an audit hook and a profile hook in the CLI's
interpreter), each bounded per source, answered from the read cache as the bench's runs are.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from dlt_ops.adapters import ConnectionTarget, DestinationSession
from dlt_ops.ledger.destination_sink import INSERT_RUN
from dlt_ops.ledger.model import RUNS_TABLE, RunRecord
from dltops_postgres.adapter import PostgresAdapter
from tests.conftest import CLI, age_databases, imported_modules

SMALL, LARGE = 5, 40
SOURCE = """
import dlt


@dlt.resource(name="rows")
def rows():
    yield [{"id": 1}]


@dlt.source(name="{name}")
def {name}_source():
    return rows
"""
#: the CLI with every statement the PostgreSQL adapter sends appended to $COUNT_FILE (a file:
#: the CLI may end with os._exit, which runs no atexit hook)
COUNTING_CLI = (
    "import os\n"
    "from dltops_postgres.adapter import PostgresAdapter\n"
    "_run = PostgresAdapter._run\n"
    "def counted(self, client, sql, params, *, fetch):\n"
    "    with open(os.environ['COUNT_FILE'], 'a') as f:\n"
    "        f.write(' '.join(str(sql).split())[:160] + ' ' + repr(params)[:80] + '\\n')\n"
    "    return _run(self, client, sql, params, fetch=fetch)\n"
    "PostgresAdapter._run = counted\n" + CLI.replace("; ", "\n")
)
#: each fleet-wide reader of the ledger, as the bench's scale rows run it
READERS = {
    "pipeline status": ["pipeline", "status"],
    "runs list": ["runs", "list"],
    "report": ["report", "-o", "report.html"],
    "metrics": ["metrics"],
    "scheduler run --once (none due)": ["scheduler", "run", "--once", "--json"],
}


def _record(source: str, started: datetime, i: int, engine: str = "postgres") -> RunRecord:
    return RunRecord(
        pipeline_name=f"{source}_pipeline", source_section=source, resource_name=None,
        destination=engine, dataset="shared", run_id=f"{source}-{i}", dlt_run_id=None,
        backfill_id=None, trigger_source="cli", started_at=started,
        completed_at=started + timedelta(seconds=30), status="completed",
        records_extracted=1, records_loaded=1, error_summary=None,
    )  # fmt: skip


def _fleet(root: Path, n: int, database: Any) -> Path:
    """``n`` scheduled sources in one PostgreSQL dataset, each with an old run and one that
    started a minute ago (so none is due at ``@daily``)."""
    config = '[dlt_ops]\ndefault_destination = "postgres"\ndefault_dataset = "shared"\n'
    config += "".join(f'\n[sources.src_{k:02d}.dlt_ops]\nschedule = "@daily"\n' for k in range(n))
    (root / ".dlt").mkdir(parents=True)
    (root / ".dlt" / "config.toml").write_text(config)
    (root / ".dlt" / "secrets.toml").write_text(
        f'[destination.postgres]\ncredentials = "{database.dlt_url}"\n'
    )
    modules = root / "fleet_pipeline" / "source"
    modules.mkdir(parents=True)
    now = datetime.now(UTC)
    target = ConnectionTarget("postgres", "shared", root, credentials=database.url)
    with DestinationSession.open(PostgresAdapter(), target) as session:
        session.ensure_table(RUNS_TABLE)
        for k in range(n):
            name = f"src_{k:02d}"
            (modules / f"{name}.py").write_text(SOURCE.replace("{name}", name))
            for i, started in enumerate((now - timedelta(days=3), now - timedelta(minutes=1))):
                session.execute(INSERT_RUN, *_record(name, started, i).values())
    return root


@pytest.fixture(scope="module")
def fleets(tmp_path_factory: pytest.TempPathFactory, postgres_server: Any) -> dict[int, Path]:
    """A small and a large fleet, each in its own database on the session's server."""
    return {
        n: _fleet(tmp_path_factory.mktemp(f"fleet{n}"), n, postgres_server.create_database())
        for n in (SMALL, LARGE)
    }


def _cli(root: Path, args: list[str], code: str, **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false", "NO_COLOR": "1", **env}
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=root, env=full_env,
                          capture_output=True, text=True, timeout=180)  # fmt: skip
    assert done.returncode == 0, f"{args}: {done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


def _statements(root: Path, args: list[str]) -> list[str]:
    count = root / "statements.txt"
    count.unlink(missing_ok=True)
    done = _cli(root, args, COUNTING_CLI, COUNT_FILE=str(count))
    if args[0] == "scheduler":
        assert done.stdout.strip() == "[]", done.stdout  # nothing due: the decision alone
    return count.read_text().splitlines() if count.exists() else []


@pytest.mark.parametrize("reader", list(READERS))
def test_statements_do_not_grow_with_the_sources_of_one_dataset(
    reader: str, fleets: dict[int, Path]
) -> None:
    small = _statements(fleets[SMALL], READERS[reader])
    large = _statements(fleets[LARGE], READERS[reader])
    assert small, f"{reader} sent no statement: is it still reading the ledger?"
    assert len(large) <= len(small), (
        f"{reader}: {len(small)} statements for {SMALL} sources, {len(large)} for {LARGE} "
        f"(work per source):\n" + "\n".join(large)
    )


def test_status_imports_the_same_modules_for_5_and_40_sources(fleets: dict[int, Path]) -> None:
    found = {
        n: imported_modules(
            _cli(root, ["pipeline", "status"], CLI, PYTHONPROFILEIMPORTTIME="1").stderr
        )  # fmt: skip
        for n, root in fleets.items()
    }
    assert "dlt_ops.cli" in found[SMALL]
    assert found[LARGE] == found[SMALL], sorted(found[LARGE] ^ found[SMALL])


def test_the_schedulers_due_check_reads_one_dataset_in_a_few_statements(
    fleets: dict[int, Path], postgres_statements: list[str]
) -> None:
    """What is due (the scheduler's decision before any run), apart from its freshness check."""
    from dlt_ops.config import load_project_config
    from dlt_ops.destinations import project_registry
    from dlt_ops.scheduler.due import all_due, recent_runs_of

    statements = postgres_statements
    config = load_project_config(fleets[LARGE])
    sources = [f"src_{k:02d}" for k in range(LARGE)]
    assert all_due(project_registry(config), config, sources, datetime.now(UTC)) == [None] * LARGE
    assert 0 < len(statements) <= 4, statements  # was two per source (columns, then its runs)
    # each source gets its own rows, newest first (the shared read keeps them apart)
    statements.clear()
    recent = recent_runs_of(project_registry(config), config, sources)
    assert {s: [r.run_id for r in runs] for s, runs in recent.items()} == {
        s: [f"{s}-1", f"{s}-0"] for s in sources
    }
    assert 0 < len(statements) <= 4, statements


def test_the_freshness_check_reads_the_stored_alerts_of_one_dataset_once(
    tmp_path: Path, postgres_database: Any, postgres_statements: list[str]
) -> None:
    """What the scheduler already alerted, for every source of a dataset: one session, one
    query (a session per source made `scheduler run --once` ~11 s at 1,000 sources)."""
    from dlt_ops.config import load_project_config
    from dlt_ops.destinations import project_registry
    from dlt_ops.scheduler.freshness_alerts import FRESHNESS_ALERTS_TABLE, INSERT, FreshnessWatch

    root = _fleet(tmp_path / "fleet", 3, postgres_database)
    target = ConnectionTarget("postgres", "shared", root, credentials=postgres_database.url)
    with DestinationSession.open(PostgresAdapter(), target) as session:
        session.ensure_table(FRESHNESS_ALERTS_TABLE)
        session.execute(INSERT, "src_01", "freshness", "warn", "late", datetime.now(UTC))
    config = load_project_config(root)
    postgres_statements.clear()
    watch = FreshnessWatch()
    watch._prefetch(project_registry(config), config, ["src_00", "src_01", "src_02"])
    assert watch.open == {"src_00": {}, "src_01": {"freshness": "warn"}, "src_02": {}}
    assert len(postgres_statements) <= 2, postgres_statements  # its columns, its open rows


# -- DuckDB: a ledger file per source -----------------------------------------------------------

#: the CLI with its Python function calls and file opens counted, written to $COUNT_FILE at exit
#: (``leave`` runs the atexit callbacks before ``os._exit``)
COUNTING_CALLS_CLI = (
    "import atexit, json, os, sys, threading\n"
    "counts = {'calls': 0, 'opens': []}\n"
    "def profiled(frame, event, arg):\n"
    "    if event == 'call':\n"
    "        counts['calls'] += 1\n"
    "def audited(event, args):\n"
    "    if event == 'open' and isinstance(args[0], str):\n"
    "        counts['opens'].append(args[0])\n"
    "def dump():\n"
    "    sys.setprofile(None)\n"
    "    threading.setprofile(None)\n"
    "    with open(os.environ['COUNT_FILE'], 'w') as f:\n"
    "        json.dump(counts, f)\n"
    "sys.addaudithook(audited)\n"
    "atexit.register(dump)\n"
    "threading.setprofile(profiled)\n"
    "sys.setprofile(profiled)\n" + CLI.replace("; ", "\n")
)
#: Python calls a reader may make per source of a DuckDB fleet, each answered from the read
#: cache: about a twentieth above what each made after #33's fixes (before them: status 1,300,
#: runs list 1,140, report 1,870, metrics 1,940, the scheduler 2,550; the scheduler 1,770
#: before its passes shared their targets: resolving_once; 1,060 before they shared the rows
#: they built: SnapshotSession.remember, and status 734, runs list 632, report 957, metrics
#: 1,023 before a cached read was left on the calling thread; status 686, runs list 582,
#: report 886, metrics 950, the scheduler 825 before a pass froze its credential lookups,
#: stamped each database once and decoded each answer text once: now 559 / 503 / 740 / 808 /
#: 684)
CALLS_PER_SOURCE = {
    "pipeline status": 590,
    "runs list": 530,
    "report": 780,
    "metrics": 850,
    "scheduler run --once (none due)": 720,
}


def _duckdb_fleet(root: Path, n: int) -> Path:
    """``n`` scheduled sources on DuckDB, each with its own ledger file holding an old run and
    one of a minute ago, the files aged so the read cache stamps them."""
    from dltops_duckdb.adapter import DuckDBAdapter

    config = '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "shared"\n'
    config += "".join(f'\n[sources.src_{k:02d}.dlt_ops]\nschedule = "@daily"\n' for k in range(n))
    (root / ".dlt").mkdir(parents=True)
    (root / ".dlt" / "config.toml").write_text(config)  # no secrets.toml: DuckDB needs none
    modules = root / "fleet_pipeline" / "source"
    modules.mkdir(parents=True)
    now = datetime.now(UTC)
    for k in range(n):
        name = f"src_{k:02d}"
        (modules / f"{name}.py").write_text(SOURCE.replace("{name}", name))
        target = ConnectionTarget("duckdb", "shared", root, pipeline_name=f"{name}_pipeline")
        with DestinationSession.open(DuckDBAdapter(), target) as session:
            session.ensure_table(RUNS_TABLE)
            for i, started in enumerate((now - timedelta(days=3), now - timedelta(minutes=1))):
                session.execute(INSERT_RUN, *_record(name, started, i, "duckdb").values())
    age_databases(root)
    return root


@pytest.fixture(scope="module")
def duckdb_fleets(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    return {n: _duckdb_fleet(tmp_path_factory.mktemp(f"duck{n}"), n) for n in (SMALL, LARGE)}


def _counted(root: Path, args: list[str]) -> dict[str, Any]:
    """What ``args`` costs once the read cache holds the fleet's answers (a first run fills it,
    as the bench's warm-up does): Python calls, and files opened under the project."""
    _cli(root, args, CLI)
    count = root / "counts.json"
    done = _cli(root, args, COUNTING_CALLS_CLI, COUNT_FILE=str(count))
    if args[0] == "scheduler":
        assert done.stdout.strip() == "[]", done.stdout
    found = json.loads(count.read_text())
    found["opens"] = [p for p in found["opens"] if p.startswith(str(root))]
    return found


@pytest.mark.parametrize("reader", list(READERS))
def test_a_duckdb_fleet_costs_each_reader_a_bounded_work_per_source(
    reader: str, duckdb_fleets: dict[int, Path]
) -> None:
    small = _counted(duckdb_fleets[SMALL], READERS[reader])
    large = _counted(duckdb_fleets[LARGE], READERS[reader])
    more = LARGE - SMALL
    # files: each source's module is read once (discovery keys its scan by content); nothing
    # else per source (the ledger files answer from the read cache: stat'ed, never opened),
    # and no file twice (the config, the read cache: one parse a command)
    opened = len(large["opens"]) - len(small["opens"])
    assert opened <= more, (reader, opened, sorted(large["opens"]))
    twice = {p: n for p, n in Counter(large["opens"]).items() if n > 1}
    assert not twice, f"{reader} opens these files more than once: {twice}"
    calls = (large["calls"] - small["calls"]) / more
    assert calls <= CALLS_PER_SOURCE[reader], (
        f"{reader}: {calls:.0f} Python calls per source (budget {CALLS_PER_SOURCE[reader]}); "
        f"{small['calls']} for {SMALL} sources, {large['calls']} for {LARGE}"
    )


def test_the_read_cache_decodes_only_the_answers_asked_for(tmp_path: Path) -> None:
    """A command over a thousand ledger files asks the cache for one or two of the dozen reads
    each database holds; what loading the file builds must not grow with the others."""
    import gc

    from dlt_ops.target.read_cache import ReadCache

    row = ["src", datetime(2026, 1, 1, tzinfo=UTC), None, 6, "completed", datetime.now(UTC)]

    def retained(others: int) -> int:
        path = tmp_path / f"reads-{others}.json"
        cache = ReadCache(path)
        for db in range(40):
            for read in ("asked", *(f"other-{i}" for i in range(others))):
                cache.put(f"db{db}", "s", read, [[*row, read]] * 10)  # answers all distinct
        cache.save()
        gc.collect()
        before = sys.getallocatedblocks()
        cache = ReadCache(path)
        assert all(cache.get(f"db{db}", "s", "asked")[0] for db in range(40))
        gc.collect()
        return sys.getallocatedblocks() - before

    unasked = 40 * (20 - 2)
    assert (retained(20) - retained(2)) / unasked <= 4  # a text each, never its rows
