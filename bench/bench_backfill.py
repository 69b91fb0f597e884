"""Benchmark: backfill per-chunk overhead (DuckDB) and parallel workers (PostgreSQL), SPEC §12.

(a) A ``--days`` window (default 30) of a small source (100 rows/day) as ``days`` x ``1d``
    chunks vs 1 chunk of the whole window, on DuckDB. Marginal cost per chunk =
    (T_days - T_1) / (days - 1), compared with a plain dlt script that loops ``pipeline.run``
    over the same windows in one process (its own (P_days - P_1) / (days - 1)), in the same
    venv. Target: <= 1.1 x the plain loop's marginal cost. With the 0.1 reference installed
    its backfill is timed the same way, interleaved.
(b) 30 daily chunks of an I/O-bound source (it sleeps per page, like a slow API) on a
    throwaway PostgreSQL server, ``--workers 1`` vs ``--workers 4``, and the 0.1 reference
    (sequential) on the same server. Target: --workers 4 >= 4 x faster than the reference
    and >= 1.6 x faster than --workers 1 (issue #33).
    (The dlt-ops 0.1 reference is strictly sequential: its time is the ``--workers 1`` shape.)

Every dlt-ops sample is a fresh process in a fresh copy of the project (a re-run would only
skip completed chunks); every plain-loop sample writes a fresh dataset.

Run: .venv/bin/python bench/bench_backfill.py [--runs N] [--days 30] [--skip-overhead]
     [--skip-workers] [--no-reference]
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from _timing import (
    OURS,
    SMOKE,
    Case,
    FreshCopy,
    Install,
    Row,
    add_source,
    bench_env,
    busy_note,
    compile_bytecode,
    init_project,
    machine_note,
    print_table,
    ratio_row,
    reference_install,
    seconds_row,
    time_interleaved,
)

START = datetime(2026, 1, 1, tzinfo=UTC)
WORKER_DAYS = 30


def window(days: int) -> tuple[str, str]:
    """``--from`` / ``--to`` of a ``days``-long window from 2026-01-01."""
    return START.isoformat(), (START + timedelta(days=days)).isoformat()


SOURCE = '''"""{per_day} rows/day for {days} days, {pages} page(s) per day, {sleep} s per page."""

import time
from datetime import datetime, timedelta, timezone

import dlt

START = datetime(2026, 1, 1, tzinfo=timezone.utc)


@dlt.resource(primary_key="id", write_disposition="merge")
def events(ts=dlt.sources.incremental("ts", initial_value=START)):
    lo, hi = ts.start_value, ts.end_value
    for d in range({days}):
        day = START + timedelta(days=d)
        if (hi is not None and day >= hi) or day + timedelta(days=1) <= lo:
            continue
        for p in range({pages}):
            if {sleep}:
                time.sleep({sleep})
            yield [
                {{"id": d * 100000 + p * 10000 + k, "ts": day + timedelta(seconds=p * 1000 + k),
                  "kind": "k%d" % (k % 7), "amount": k * 0.5}}
                for k in range({per_day} // {pages})
            ]


@dlt.source(name="{name}")
def {name}_source():
    return events
'''

PLAIN_LOOP = '''"""Plain dlt: one process, one pipeline, pipeline.run once per window."""

import sys
from datetime import datetime, timedelta, timezone

import dlt

sys.path.insert(0, {root!r})
from my_pipeline.source.{name} import {name}_source  # noqa: E402

chunks, dataset = int(sys.argv[1]), sys.argv[2]
start = datetime(2026, 1, 1, tzinfo=timezone.utc)
step = timedelta(days={days} // chunks)
pipeline = dlt.pipeline(
    pipeline_name="plain_pipeline",
    destination=dlt.destinations.duckdb(credentials={db!r}),
    dataset_name=dataset,
    pipelines_dir={pipelines!r},
)
for i in range(chunks):
    lo, hi = start + i * step, start + (i + 1) * step
    source = {name}_source()
    source.events.apply_hints(
        incremental=dlt.sources.incremental("ts", initial_value=lo, end_value=hi)
    )
    info = pipeline.run(source)
    assert not info.has_failed_jobs
'''


class FreshDataset(Case):
    """A case whose command gets a new dataset name per sample (``{ds}`` in the command)."""

    counter = itertools.count()

    def once(self) -> float:
        template = list(self.cmd)
        self.cmd = [c.replace("{ds}", f"ds_{next(self.counter)}") for c in template]
        try:
            return super().once()
        finally:
            self.cmd = template


@dataclass
class Overhead:
    """One install's four cases: its backfill in ``days`` chunks and in one, and the plain loop
    (in the same venv) over ``days`` windows and over one."""

    install: Install
    days: int
    many: Case
    one: Case
    plain_many: Case
    plain_one: Case

    @property
    def cases(self) -> list[Case]:
        return [self.many, self.one, self.plain_many, self.plain_one]

    def marginal(self) -> tuple[Case, Case]:
        """Per-chunk marginal costs, sample by sample: (backfill, plain loop)."""
        n = self.days - 1
        ours = Case(f"{self.install.label}: marginal cost per chunk", [], self.many.cwd, {})
        plain = Case(f"plain dlt ({self.install.label} venv): marginal per window", [], Path(), {})
        pairs = zip(self.many.samples, self.one.samples, strict=True)
        ours.samples = [(a - b) / n for a, b in pairs]
        pairs = zip(self.plain_many.samples, self.plain_one.samples, strict=True)
        plain.samples = [(a - b) / n for a, b in pairs]
        return ours, plain


def overhead_cases(install: Install, work: Path, days: int) -> Overhead:
    """A project with the small source and a plain-loop script beside it, for ``install``."""
    env = bench_env(work)
    root = init_project(install, work, env)
    add_source(root, "small", SOURCE.format(per_day=100, pages=1, sleep=0, name="small",
               days=days), dataset="bench_ds")  # fmt: skip
    plain = work / "plain"
    plain.mkdir()
    script = plain / "plain_loop.py"
    script.write_text(
        PLAIN_LOOP.format(root=str(root), name="small", days=days,
                          db=str(plain / "plain.duckdb"), pipelines=str(plain / "pipelines"))
    )  # fmt: skip
    compile_bytecode(install, root, plain)
    lo, hi = window(days)

    def backfill(chunk: str, label: str) -> Case:
        cmd = [install.cli, "pipeline", "backfill", "small", "--from", lo, "--to", hi,
               "--chunk", chunk]  # fmt: skip
        return FreshCopy(f"{install.label}: backfill {days} days as {label}", cmd, root, env)

    def loop(n: int) -> Case:
        cmd = [install.python, str(script), str(n), "{ds}"]
        label = f"plain dlt loop ({install.label} venv), {n} window(s)"
        return FreshDataset(label, cmd, plain, env)

    return Overhead(
        install,
        days,
        many=backfill("1d", f"{days} x 1d"),
        one=backfill(f"{days}d", f"1 x {days}d"),
        plain_many=loop(days),
        plain_one=loop(1),
    )


def time_overheads(overheads: list[Overhead], runs: int) -> None:
    """All installs' cases interleaved; the one-chunk cases warm up (files, bytecode)."""
    for o in overheads if not SMOKE else ():
        o.one.once()
        o.plain_one.once()
    time_interleaved([c for o in overheads for c in o.cases], runs, warmup=0)


def overhead_rows(overheads: list[Overhead], limit: float = 1.1) -> list[Row]:
    rows: list[Row] = []
    for o in overheads:
        ours, plain = o.marginal()
        rows += [*(seconds_row(c) for c in o.cases), seconds_row(ours), seconds_row(plain)]
        rows.append(
            ratio_row(f"{o.install.label}: marginal per chunk / plain loop's", ours, plain,
                      limit=limit if o.install is OURS else None)
        )  # fmt: skip
    return rows


def _postgres_project(install: Install, work: Path, db_url: str) -> tuple[Path, dict[str, str]]:
    env = bench_env(work, DESTINATION__POSTGRES__CREDENTIALS=db_url)
    root = init_project(install, work, env)
    module = SOURCE.format(per_day=100, pages=2, sleep=0.5, name="slow", days=WORKER_DAYS)
    add_source(root, "slow", module, dataset="bench_ds", extra='destination = "postgres"\n')
    compile_bytecode(install, root)
    return root, env


@dataclass
class Workers:
    """``--workers 1`` and ``--workers 4`` on PostgreSQL, and the reference (sequential)."""

    one: Case
    four: Case
    reference: Case | None

    def rows(self, limit: float = 4.0, own_limit: float = 1.6) -> list[Row]:
        own = ratio_row("speed-up --workers 4 vs --workers 1", self.one, self.four)
        own.target = f">= {own_limit:.2f} x"
        own.verdict = "PASS" if own.median >= own_limit else "FAIL"
        rows = [seconds_row(self.one), seconds_row(self.four), own]
        if self.reference is not None:
            versus = ratio_row(
                "speed-up --workers 4 vs ref-0.1 (sequential)", self.reference, self.four
            )
            versus.target = f">= {limit:.2f} x"
            versus.verdict = "PASS" if versus.median >= limit else "FAIL"
            rows += [seconds_row(self.reference), versus]
        return rows


def workers(work: Path, runs: int, ref: Install | None) -> Workers:
    """Time (b) on a throwaway PostgreSQL server (one database per install)."""
    from dlt_ops.testing.postgres import running_postgres

    lo, hi = window(WORKER_DAYS)
    with running_postgres() as server:
        root, env = _postgres_project(OURS, work / "ours", server.create_database().dlt_url)

        def case(n: int) -> Case:
            cmd = [OURS.cli, "pipeline", "backfill", "slow", "--from", lo, "--to", hi,
                   "--chunk", "1d", "--workers", str(n), "--dataset", "{ds}"]  # fmt: skip
            return FreshDataset(f"30 x 1d, I/O-bound, Postgres, --workers {n}", cmd, root, env)

        cases = [case(1), case(4)]
        reference = None
        if ref is not None:
            ref_root, ref_env = _postgres_project(
                ref, work / "ref", server.create_database().dlt_url
            )
            cmd = [ref.cli, "pipeline", "backfill", "slow", "--from", lo, "--to", hi,
                   "--chunk", "1d"]  # fmt: skip
            reference = FreshDatabase(
                "30 x 1d, I/O-bound, Postgres, ref-0.1 (sequential)", cmd, ref_root, ref_env,
                new_database=lambda: server.create_database().dlt_url,
            )  # fmt: skip
            cases.append(reference)
        time_interleaved(cases, runs, warmup=0)
    return Workers(cases[0], cases[1], reference)


class FreshDatabase(FreshCopy):
    """The reference's case: a new project copy and a new database per sample. Its ledger and
    chunk tables live in the one dataset it writes, so a fresh copy alone would re-run into
    completed chunks; one sample of a ~1 min backfill swung the speed-up by +-0.5x."""

    def __init__(
        self, label: str, cmd: list[str], cwd: Path, env: dict[str, str], *,
        new_database: Callable[[], str],
    ) -> None:  # fmt: skip
        super().__init__(label, cmd, cwd, env)
        self.new_database = new_database

    def once(self) -> float:
        base = self.env
        self.env = dict(base, DESTINATION__POSTGRES__CREDENTIALS=self.new_database())
        try:
            return super().once()
        finally:
            self.env = base


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs per case (default 3)")
    parser.add_argument("--days", type=int, default=30, help="(a): window length in days")
    parser.add_argument("--skip-overhead", action="store_true", help="skip (a), DuckDB")
    parser.add_argument("--skip-workers", action="store_true", help="skip (b), PostgreSQL")
    parser.add_argument("--no-reference", action="store_true", help="skip the 0.1 reference")
    args = parser.parse_args()
    notes = [
        machine_note(),
        "each sample: a fresh process and a fresh project copy or dataset; cases interleaved",
        "the dlt-ops 0.1 reference runs chunks sequentially in one process (no --workers)",
    ]
    ref = reference_install(not args.no_reference, notes)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="dltops-bench-backfill-") as tmp:
        if not args.skip_overhead:
            installs = [OURS] + ([ref] if ref is not None else [])
            overheads = [
                overhead_cases(i, Path(tmp) / f"a{n}", args.days) for n, i in enumerate(installs)
            ]
            time_overheads(overheads, args.runs)
            rows += overhead_rows(overheads)
        if not args.skip_workers:
            rows += workers(Path(tmp) / "b", max(1, args.runs - 1), ref).rows()
    busy = busy_note()
    print_table("backfill: per-chunk overhead (DuckDB) and --workers (PostgreSQL)", rows,
                [*notes, *([busy] if busy else [])])  # fmt: skip


if __name__ == "__main__":
    main()
