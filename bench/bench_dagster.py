"""Benchmark: ``dlt_ops.dagster.build_definitions`` over a many-source project (target: <= 1 s
for 100).

It is what a Dagster code location runs each time it loads; it reads the project with Phase 1
only (no project code imported). Every other source has a backfill window, so half the sources
also get a partitioned backfill job. Each sample is a fresh process that imports Dagster first
(a code server has it loaded), then times importing the builder and building the Definitions
(and resolving their asset graph, so nothing is left lazy). Dagster is not a dependency of the
dev venv: ``--install`` uses (or builds) the cached test venv of ``dlt_ops.testing.dagster``;
without it, the given ``--python`` must have Dagster (else: skipped).

Run: .venv/bin/python bench/bench_dagster.py [--install] [--python PY] [--sources 100]
     [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from _timing import child_samples, importable, many_source_project, print_verdict

TARGET_S = 1.0

SOURCE = '''"""Benchmark source {name}."""

from datetime import datetime, timezone

import dlt

START = datetime(2026, 1, 1, tzinfo=timezone.utc)


@dlt.resource(name="items", primary_key="id", write_disposition="merge")
def items(ts=dlt.sources.incremental("ts", initial_value=START)):
    yield [{{"id": 1, "ts": START}}]


@dlt.resource(name="users", primary_key="id", write_disposition="replace")
def users():
    yield [{{"id": 1}}]


@dlt.source(name="{name}")
def {name}_source():
    return items, users
'''

WINDOW = 'backfill_start = "2026-01-01T00:00:00Z"\nbackfill_end = "2026-04-01T00:00:00Z"\n'

CHILD = """
import json, sys, time
import dagster  # noqa: F401  (a code server has Dagster loaded before it loads a location)
start = time.perf_counter()
from dlt_ops.dagster import build_definitions
defs = build_definitions(sys.argv[1])
assets = len(defs.resolve_all_asset_specs())
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "assets": assets, "jobs": len(list(defs.jobs or ())),
                  "schedules": len(list(defs.schedules or ()))}))
"""


def dagster_python() -> str:
    """The cached Dagster test venv's interpreter (built on first use)."""
    from dlt_ops.testing.dagster import ensure_dagster_venv

    return str(ensure_dagster_venv() / "bin" / "python")


def project(work: Path, n: int) -> Path:
    """``n`` scheduled sources, every other one with a backfill window."""
    return many_source_project(work, "dagster", n, SOURCE, lambda i: WINDOW if i % 2 == 0 else "")


def measure(python: str, root: Path, runs: int, work: Path) -> list[dict[str, float]]:
    """``runs`` fresh processes (after one warm-up): the child's own figures."""
    (work / "dagster-home").mkdir(exist_ok=True)
    env = dict(os.environ, DAGSTER_HOME=str(work / "dagster-home"))
    return child_samples(python, CHILD, root, runs, env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--install", action="store_true", help="use the cached Dagster venv")
    parser.add_argument("--python", default=sys.executable, help="an interpreter with Dagster")
    parser.add_argument("--sources", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    python = dagster_python() if args.install else args.python
    if not importable(python, "dagster"):
        print(f"skipped: Dagster is not importable by {python} (try --install)")
        return
    with tempfile.TemporaryDirectory(prefix="dltops-bench-dagster-") as tmp:
        work = Path(tmp)
        samples = measure(python, project(work / "p", args.sources), args.runs, work)
    first = samples[0]
    print_verdict(f"Dagster build_definitions, {args.sources} sources ({first['assets']:.0f} "
                  f"assets, {first['jobs']:.0f} partitioned jobs, {first['schedules']:.0f} "
                  f"schedule(s)), median of {args.runs}", samples, TARGET_S)  # fmt: skip


if __name__ == "__main__":
    main()
