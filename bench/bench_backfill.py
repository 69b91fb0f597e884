"""Benchmark: backfill per-chunk overhead (DuckDB) and parallel workers (PostgreSQL), SPEC §12.

(a) A 30-day window of a small source (100 rows/day) as 30 x ``1d`` chunks vs 1 x ``30d`` on
    DuckDB. Marginal cost per chunk = (T30 - T1) / 29, compared with a plain dlt script that
    loops ``pipeline.run`` over the same 30 windows in one process (its own (P30 - P1) / 29).
    Target: <= 1.3 x the plain loop's marginal cost.
(b) 30 daily chunks of an I/O-bound source (it sleeps per page, like a slow API) on a
    throwaway PostgreSQL server, ``--workers 1`` vs ``--workers 4``, and the 0.1 reference
    (sequential) on the same server. Target: --workers 4 >= 3 x faster than the reference.
    (The dlt-ops 0.1 reference is strictly sequential: its time is the ``--workers 1`` shape.)

Every sample is a fresh process on a fresh dataset (a re-run would only skip completed chunks).

Run: .venv/bin/python bench/bench_backfill.py [--runs N] [--skip-overhead] [--skip-workers]
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import tempfile
from pathlib import Path

from _timing import (
    OURS,
    Case,
    Install,
    Row,
    add_source,
    bench_env,
    compile_bytecode,
    init_project,
    machine_note,
    print_table,
    ratio_row,
    reference_install,
    run,
    seconds_row,
    time_interleaved,
)

FROM, TO = "2026-01-01T00:00:00+00:00", "2026-01-31T00:00:00+00:00"

SOURCE = '''"""{per_day} rows per day for 30 days, {pages} page(s) per day, {sleep} s per page."""

import time
from datetime import datetime, timedelta, timezone

import dlt

START = datetime(2026, 1, 1, tzinfo=timezone.utc)


@dlt.resource(primary_key="id", write_disposition="merge")
def events(ts=dlt.sources.incremental("ts", initial_value=START)):
    lo, hi = ts.start_value, ts.end_value
    for d in range(30):
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
step = timedelta(days=30 // chunks)
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


def overhead(work: Path, runs: int) -> list[Row]:
    env = bench_env(work)
    root = init_project(OURS, work, env)
    add_source(root, "small", SOURCE.format(per_day=100, pages=1, sleep=0, name="small"),
               dataset="unused")  # fmt: skip
    plain = work / "plain"
    plain.mkdir()
    script = plain / "plain_loop.py"
    script.write_text(
        PLAIN_LOOP.format(
            root=str(root),
            name="small",
            db=str(plain / "plain.duckdb"),
            pipelines=str(plain / "pipelines"),
        )  # fmt: skip
    )
    compile_bytecode(OURS, root, plain)

    def ours(chunk: str) -> Case:
        cmd = [OURS.cli, "pipeline", "backfill", "small", "--from", FROM, "--to", TO,
               "--chunk", chunk, "--dataset", "{ds}"]  # fmt: skip
        return FreshDataset(f"dlt-ops backfill, 30 days as {chunk}", cmd, root, env)

    def loop(n: int) -> Case:
        cmd = [OURS.python, str(script), str(n), "{ds}"]
        return FreshDataset(f"plain dlt loop, {n} window(s)", cmd, plain, env)

    cases = [ours("1d"), ours("30d"), loop(30), loop(1)]
    time_interleaved(cases, runs)
    t30, t1, p30, p1 = cases
    ours_marginal = Case("dlt-ops marginal cost per chunk (T30-T1)/29", [], root, env)
    plain_marginal = Case("plain dlt marginal cost per window (P30-P1)/29", [], plain, env)
    ours_marginal.samples = [(a - b) / 29 for a, b in zip(t30.samples, t1.samples, strict=True)]
    plain_marginal.samples = [(a - b) / 29 for a, b in zip(p30.samples, p1.samples, strict=True)]
    return [
        *(seconds_row(c) for c in cases),
        seconds_row(ours_marginal),
        seconds_row(plain_marginal),
        ratio_row(
            "marginal per chunk: dlt-ops / plain loop", ours_marginal, plain_marginal, limit=1.3
        ),  # fmt: skip
    ]


def _reference_on_postgres(ref: Install, work: Path, db_url: str, notes: list[str]) -> Case | None:
    """The 0.1 reference's (sequential) backfill of the same window on the same server."""
    try:  # the reference venv holds only the duckdb extra; its postgres path needs psycopg2
        run([shutil.which("uv") or "uv", "pip", "install", "-q", "-p", ref.python,
             "dlt[postgres]==1.31.0"], cwd=work, env=dict(os.environ))  # fmt: skip
    except Exception as exc:  # noqa: BLE001 - a benchmark side case, reported as a note
        notes.append(f"reference on Postgres: skipped ({exc})")
        return None
    env = bench_env(work / "ref", DESTINATION__POSTGRES__CREDENTIALS=db_url)
    root = init_project(ref, work / "ref", env)
    add_source(root, "slow", SOURCE.format(per_day=100, pages=2, sleep=0.5, name="slow"),
               dataset="ref_ds", extra='destination = "postgres"\n')  # fmt: skip
    compile_bytecode(ref, root)
    cmd = [ref.cli, "pipeline", "backfill", "slow", "--from", FROM, "--to", TO, "--chunk", "1d"]
    return Case("30 x 1d, I/O-bound, Postgres, ref-0.1 (sequential)", cmd, root, env)


def workers(work: Path, runs: int, ref: Install | None, notes: list[str]) -> list[Row]:
    from dlt_ops.testing.postgres import running_postgres

    with running_postgres() as server:
        db = server.create_database()
        env = bench_env(work, DESTINATION__POSTGRES__CREDENTIALS=db.dlt_url)
        root = init_project(OURS, work, env)
        add_source(root, "slow", SOURCE.format(per_day=100, pages=2, sleep=0.5, name="slow"),
                   dataset="unused", extra='destination = "postgres"\n')  # fmt: skip
        compile_bytecode(OURS, root)

        def case(n: int) -> Case:
            cmd = [OURS.cli, "pipeline", "backfill", "slow", "--from", FROM, "--to", TO,
                   "--chunk", "1d", "--workers", str(n), "--dataset", "{ds}"]  # fmt: skip
            return FreshDataset(f"30 x 1d, I/O-bound, Postgres, --workers {n}", cmd, root, env)

        one, four = case(1), case(4)
        time_interleaved([one, four], runs, warmup=0)
        reference = None
        if ref is not None:
            reference = _reference_on_postgres(ref, work, server.create_database().dlt_url, notes)
            if reference is not None:
                time_interleaved([reference], 1, warmup=0)  # one sample: a fresh dataset
    rows = [seconds_row(one), seconds_row(four),
            ratio_row("speed-up --workers 4 vs --workers 1", one, four)]  # fmt: skip
    if reference is not None:
        versus = ratio_row("speed-up --workers 4 vs ref-0.1 (sequential)", reference, four)
        versus.target = ">= 3.00 x"
        versus.verdict = "PASS" if versus.median >= 3 else "FAIL"
        rows += [seconds_row(reference), versus]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="timed runs per case (default 3)")
    parser.add_argument("--skip-overhead", action="store_true", help="skip (a), DuckDB")
    parser.add_argument("--skip-workers", action="store_true", help="skip (b), PostgreSQL")
    parser.add_argument("--no-reference", action="store_true", help="skip the 0.1 reference")
    args = parser.parse_args()
    notes = [
        machine_note(),
        "each sample: a fresh process and a fresh dataset; cases timed interleaved",
        "the dlt-ops 0.1 reference runs chunks sequentially in one process (no --workers)",
    ]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="dltops-bench-backfill-") as tmp:
        if not args.skip_overhead:
            rows += overhead(Path(tmp) / "a", args.runs)
        if not args.skip_workers:
            ref = reference_install(not args.no_reference, notes)
            rows += workers(Path(tmp) / "b", max(1, args.runs - 1), ref, notes)
    print_table("backfill: per-chunk overhead (DuckDB) and --workers (PostgreSQL)", rows, notes)


if __name__ == "__main__":
    main()
