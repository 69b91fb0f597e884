"""Benchmark: `dlt-ops pipeline status` (SPEC §12), each sample a fresh process.

Sections (each timed interleaved, after one warm-up per case):
  cold     one source on DuckDB (the example project after one real run);
           target <= 0.15 x the 0.1 reference (<= 0.34 s of its recorded 2.29 s, without it)
  ledger   a 10-row vs a 1 M-row `_dlt_ops_runs`, rows spread over 10 source names so the query
           must filter, seeded with SQL after one real run created the table; DuckDB and
           PostgreSQL (a throwaway server); target 1 M <= 1.5 x 10
  sources  a project of ``--sources`` sources (default 100), each with its own DuckDB ledger of
           ``--source-rows`` runs (default 10 000; one real run, its database copied and
           re-seeded per source); target <= 0.6 s

Run: .venv/bin/python bench/bench_status.py [--runs N] [--sections cold,ledger,sources]
     [--no-reference] [--no-postgres] [--ledger-rows 1000000] [--sources 100]
     [--source-rows 10000]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from _timing import (
    OURS,
    Case,
    Install,
    Row,
    add_recent_run_duckdb,
    add_recent_runs_postgres,
    add_source,
    bench_env,
    compile_bytecode,
    count_ledger_duckdb,
    init_project,
    machine_note,
    print_table,
    ratio_row,
    reference_install,
    run,
    seconds_row,
    seed_duckdb,
    seed_postgres,
    set_source_option,
    time_interleaved,
    timed,
)

SOURCE = "demo_events"  # the example project's source
DATASET = "demo_data"  # its dataset
#: the seeded ledgers spread rows over these names; only SOURCE exists in the project
LEDGER_SOURCES = [SOURCE] + [f"other_{i}" for i in range(1, 10)]
REFERENCE_STATUS_S = 2.29  # SPEC §12: the 0.1 reference measured on this kind of machine
N_SOURCES = 100
RUNS_PER_SOURCE = 10_000
SOURCES_TARGET_S = 0.6

SMALL_SOURCE = '''"""Benchmark source {name}: one row."""

import dlt


@dlt.resource(name="items", primary_key="id", write_disposition="replace")
def items():
    """One row."""
    yield [{{"id": 1, "source": "{name}"}}]


@dlt.source(name="{name}")
def {name}_source():
    """One resource."""
    return items
'''


def status_case(install: Install, label: str, root: Path, env: dict[str, str]) -> Case:
    return Case(f"{install.label}: {label}", [install.cli, "pipeline", "status"], root, env)


def example_after_one_run(install: Install, work: Path, env: dict[str, str]) -> Path:
    """``init --example`` and one real ``pipeline run`` (which creates the ledger table)."""
    root = init_project(install, work, env)
    run([install.cli, "pipeline", "run", "-s", SOURCE, "-y"], cwd=root, env=env)
    compile_bytecode(install, root)
    return root


# ----------------------------------------------------------------------------- sections


def section_cold(installs: list[Install], work: Path, runs: int) -> tuple[list[Row], list[Path]]:
    """Status, one source, DuckDB, one-row ledger; returns the projects for reuse."""
    cases, roots = [], []
    for i, install in enumerate(installs):
        env = bench_env(work / f"cold{i}")
        root = timed(
            f"{install.label}: example project + one run",
            lambda: example_after_one_run(install, work / f"cold{i}", env),  # noqa: B023
        )
        roots.append(root)
        cases.append(status_case(install, "status, 1 source, DuckDB (cold process)", root, env))
    if runs == 0:  # only the projects were wanted
        return [], roots
    timed(f"cold x {runs}", lambda: time_interleaved(cases, runs))
    if len(cases) == 2:
        rows = [seconds_row(cases[0]), seconds_row(cases[1])]
        rows.append(ratio_row("dlt-ops / ref-0.1, status 1 source", cases[0], cases[1], limit=0.15))
    else:
        rows = [seconds_row(cases[0], limit=0.15 * REFERENCE_STATUS_S)]
    return rows, roots


def section_ledger_duckdb(
    installs: list[Install], small_roots: list[Path], work: Path, runs: int, big: int
) -> list[Row]:
    """10-row vs ``big``-row DuckDB ledgers (the 10-row one reuses the cold project)."""
    pairs = []
    for i, (install, small) in enumerate(zip(installs, small_roots, strict=True)):
        env = bench_env(work / f"cold{i}")
        db = small / f"{SOURCE}_pipeline.duckdb"
        seed_duckdb(db, DATASET, 10 - count_ledger_duckdb(db, DATASET), LEDGER_SOURCES)
        large_env = bench_env(work / f"big{i}")
        large = timed(
            f"{install.label}: second example project + one run",
            lambda: example_after_one_run(install, work / f"big{i}", large_env),  # noqa: B023
        )
        big_db = large / f"{SOURCE}_pipeline.duckdb"
        timed(
            f"{install.label}: seed {big:,} DuckDB ledger rows",
            lambda: seed_duckdb(big_db, DATASET, big - 1, LEDGER_SOURCES),  # noqa: B023
        )
        for dbf in (db, big_db):
            print(f"  setup: {dbf} holds {count_ledger_duckdb(dbf, DATASET):,} ledger rows")
        pairs.append(
            (
                install,
                status_case(install, "status, 10-row ledger, DuckDB", small, env),
                status_case(install, f"status, {big:,}-row ledger, DuckDB", large, large_env),
            )
        )
    return _ledger_rows(pairs, runs, big, "DuckDB")


def section_ledger_postgres(
    installs: list[Install], work: Path, runs: int, big: int, notes: list[str]
) -> list[Row]:
    """The same on PostgreSQL (our install only: the reference has only the duckdb extra)."""
    from dlt_ops.testing.postgres import PostgresUnavailable, running_postgres

    if any(i is not OURS for i in installs):
        notes.append("ledger on PostgreSQL: reference not measured (installed without postgres)")
    with ExitStack() as stack:
        try:
            server = timed("start PostgreSQL", lambda: stack.enter_context(running_postgres()))
        except PostgresUnavailable as exc:
            notes.append(f"ledger on PostgreSQL: skipped ({exc})")
            return []
        projects = []
        for size, name in ((10, "pg10"), (big, "pgbig")):
            db = server.create_database(f"bench_{name}")
            env = bench_env(work / name)
            root = init_project(OURS, work / name, env)
            set_source_option(root, SOURCE, "destination", "postgres")
            with (root / ".dlt" / "secrets.toml").open("a") as f:
                f.write(f'\n[destination.postgres]\ncredentials = "{db.dlt_url}"\n')
            cmd = [OURS.cli, "pipeline", "run", "-s", SOURCE, "-y"]
            timed(f"postgres {name}: one run", lambda: run(cmd, cwd=root, env=env))  # noqa: B023
            timed(
                f"postgres {name}: seed {size - 1:,} rows",
                lambda: seed_postgres(db.url, DATASET, size - 1, LEDGER_SOURCES),  # noqa: B023
            )
            compile_bytecode(OURS, root)
            projects.append((root, env, size))
        (small, small_env, _), (large, large_env, _) = projects
        pairs = [
            (
                OURS,
                status_case(OURS, "status, 10-row ledger, Postgres", small, small_env),
                status_case(OURS, f"status, {big:,}-row ledger, Postgres", large, large_env),
            )
        ]
        return _ledger_rows(pairs, runs, big, "Postgres")


def _ledger_rows(pairs: list[tuple[Install, Case, Case]], runs: int, big: int, where: str) -> list:
    cases = [c for _, small, large in pairs for c in (small, large)]
    timed(f"ledger {where} x {runs}", lambda: time_interleaved(cases, runs))
    rows: list[Row] = []
    for install, small, large in pairs:
        rows += [seconds_row(small), seconds_row(large)]
        rows.append(
            ratio_row(f"{install.label}: {big:,} / 10 rows, {where}", large, small, limit=1.5)
        )
    return rows


def many_sources(
    install: Install,
    work: Path,
    env: dict[str, str],
    ledger_db: Path,
    n: int = N_SOURCES,
    rows: int = RUNS_PER_SOURCE,
) -> Path:
    """``n`` generated sources, each with its own DuckDB ledger of ``rows`` runs.

    No run per source (the 0.1 reference needs ~2 min for one run in a 50-source project):
    ``ledger_db`` — a database whose ledger table a real run of ``install`` created — is copied
    to each source's database file and re-seeded with that source's rows.
    """
    root = init_project(install, work, env, name="many")
    shutil.rmtree(root / "my_pipeline")  # only the generated sources
    (root / "my_pipeline" / "source").mkdir(parents=True)
    (root / ".dlt" / "config.toml").write_text(
        f'[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "{DATASET}"\n'
    )
    for i in range(n):
        name = f"src_{i:03d}"
        add_source(root, name, SMALL_SOURCE.format(name=name), dataset=DATASET)
        db = root / f"{name}_pipeline.duckdb"
        shutil.copyfile(ledger_db, db)
        seed_duckdb(db, DATASET, rows, [name], replace=True)
    compile_bytecode(install, root)
    return root


#: the scale rows (bench/run_all.py): fleets of these many sources, each source's ledger
#: holding this many old runs plus one that started a minute ago (so none is due at @daily)
SCALE_SIZES = (10, 100, 1_000)
SCALE_RUNS_EACH = 10
SCALE_TARGET_S = 1.0
#: every fleet-wide ledger reader the scale rows time, as its CLI arguments
SCALE_READERS = {
    "`pipeline status`": ["pipeline", "status"],
    "`runs list`": ["runs", "list"],
    "`scheduler run --once` deciding, none due": ["scheduler", "run", "--once", "--json"],
    "`report`": ["report", "-o", "report.html"],
    "`metrics`": ["metrics"],
}


def duckdb_fleet(
    install: Install, work: Path, env: dict[str, str], ledger_db: Path, n: int, rows: int
) -> Path:
    """:func:`many_sources`, each source's ledger also holding a run of a minute ago."""
    root = many_sources(install, work, env, ledger_db, n, rows)
    for i in range(n):
        name = f"src_{i:03d}"
        add_recent_run_duckdb(root / f"{name}_pipeline.duckdb", DATASET, name)
    return root


def postgres_fleet(
    install: Install, work: Path, env: dict[str, str], db: Any, n: int, rows: int
) -> Path:
    """``n`` sources sharing one PostgreSQL dataset (``db``: a fresh database of
    :func:`dlt_ops.testing.postgres.running_postgres`): the ledger table as dlt-ops creates it,
    ``rows`` old runs per source and a run of a minute ago each, seeded with SQL."""
    from dlt_ops.adapters import ConnectionTarget, DestinationSession
    from dlt_ops.ledger.model import RUNS_TABLE
    from dltops_postgres.adapter import PostgresAdapter

    root = init_project(install, work, env, name="pgfleet")
    shutil.rmtree(root / "my_pipeline")
    (root / "my_pipeline" / "source").mkdir(parents=True)
    (root / ".dlt" / "config.toml").write_text(
        f'[dlt_ops]\ndefault_destination = "postgres"\ndefault_dataset = "{DATASET}"\n'
    )
    with (root / ".dlt" / "secrets.toml").open("a") as f:
        f.write(f'\n[destination.postgres]\ncredentials = "{db.dlt_url}"\n')
    names = [f"src_{i:03d}" for i in range(n)]
    for name in names:
        add_source(root, name, SMALL_SOURCE.format(name=name), dataset=DATASET)
    target = ConnectionTarget("postgres", DATASET, root, credentials=db.url)
    with DestinationSession.open(PostgresAdapter(), target) as session:
        session.ensure_table(RUNS_TABLE)
    seed_postgres(db.url, DATASET, rows * n, names)
    add_recent_runs_postgres(db.url, DATASET, names)
    compile_bytecode(install, root)
    return root


def sources_cases(
    installs: list[Install],
    example_roots: list[Path],
    work: Path,
    n: int = N_SOURCES,
    rows: int = RUNS_PER_SOURCE,
) -> list[Case]:
    """One ``pipeline status`` case per install over an ``n``-source project (checked once)."""
    cases = []
    for i, (install, example) in enumerate(zip(installs, example_roots, strict=True)):
        env = bench_env(work / f"many{i}")
        ledger_db = example / f"{SOURCE}_pipeline.duckdb"
        root = timed(
            f"{install.label}: {n}-source project, {rows:,} runs each",
            lambda: many_sources(install, work / f"many{i}", env, ledger_db, n, rows),  # noqa: B023
        )
        out = run([install.cli, "pipeline", "status"], cwd=root, env=env).stdout
        shown = out.count("Source: ")
        if shown != n or out.count("completed") < n:
            raise RuntimeError(f"{install.label}: status shows {shown} sources:\n{out[:2000]}")
        label = f"status, {n} sources x {rows:,}-run ledgers, DuckDB"
        cases.append(status_case(install, label, root, env))
    return cases


def section_sources(
    installs: list[Install],
    example_roots: list[Path],
    work: Path,
    runs: int,
    n: int = N_SOURCES,
    rows: int = RUNS_PER_SOURCE,
) -> list[Row]:
    cases = sources_cases(installs, example_roots, work, n, rows)
    timed(f"{n} sources x {runs}", lambda: time_interleaved(cases, runs))
    out = [seconds_row(cases[0], limit=SOURCES_TARGET_S)] + [seconds_row(c) for c in cases[1:]]
    if len(cases) == 2:
        out.append(ratio_row(f"dlt-ops / ref-0.1, {n} sources", cases[0], cases[1]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per case (default 5)")
    parser.add_argument("--sections", default="cold,ledger,sources")
    parser.add_argument("--ledger-rows", type=int, default=1_000_000)
    parser.add_argument("--no-reference", action="store_true", help="skip the 0.1 reference")
    parser.add_argument("--no-postgres", action="store_true", help="skip the Postgres ledger")
    parser.add_argument("--sources", type=int, default=N_SOURCES, help="sources: how many")
    parser.add_argument(
        "--source-rows", type=int, default=RUNS_PER_SOURCE, help="sources: ledger rows each"
    )
    args = parser.parse_args()
    sections = set(args.sections.split(","))
    notes = [machine_note()]
    installs = [OURS]
    ref = reference_install(not args.no_reference, notes)
    if ref is not None:
        installs.append(ref)
    for install in installs:
        compile_bytecode(install)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="dltops-bench-status-") as tmp:
        work = Path(tmp)
        # the example project after one real run: the cold case, the 10-row ledger, and the
        # ledger table the many-source project copies
        cold_rows, roots = section_cold(installs, work, args.runs if "cold" in sections else 0)
        if "cold" in sections:
            rows += cold_rows
        if "ledger" in sections:
            rows += section_ledger_duckdb(installs, roots, work, args.runs, args.ledger_rows)
            if args.no_postgres:
                notes.append("ledger on PostgreSQL: skipped (--no-postgres)")
            else:
                rows += section_ledger_postgres(installs, work, args.runs, args.ledger_rows, notes)
        if "sources" in sections:
            rows += section_sources(
                installs, roots, work, args.runs, args.sources, args.source_rows
            )
    print_table(f"pipeline status (median of {args.runs}, fresh process each)", rows, notes)


if __name__ == "__main__":
    main()
