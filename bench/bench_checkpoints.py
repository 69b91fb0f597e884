"""Benchmark: checkpointed extract vs plain extract (target: throughput ratio >= 0.97).

One incremental resource yields ``--pages`` pages of ``--rows`` rows each; the checkpointed
variant is the same function under ``@with_checkpoints(frequency=10)``, so it pays for the
table setup, the resume read, one INSERT every 10 pages, and the completion UPDATE/DELETE.
Only ``pipeline.extract`` is timed (checkpoints live in extract); each sample uses a fresh
pipeline working dir and a fresh checkpoint namespace; the variants alternate, and which
of them goes first alternates too.
DuckDB and a throwaway PostgreSQL server (``dlt_ops.testing.postgres``) are measured, each on
two paths: inside a dlt-ops run (the run's already-open destination session is shared, as in
``dlt-ops pipeline run``) and in a plain dlt script (the manager opens its own connection,
so its connect and credential resolution are part of the cost).

"added ms" is the median over rounds of (checkpointed - plain) for one extract; the last line
gives what opening a session costs, which the plain-dlt path pays once per extract before its
first page (the resume state is read from the destination before the API is asked for anything).

Run: .venv/bin/python bench/bench_checkpoints.py [--pages 1000] [--rows 100] [--runs 5]
     [--skip-postgres] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")

T0 = datetime(2026, 1, 1, tzinfo=UTC)
DATASET = "bench_data"


def _pages(start: datetime, pages: int, rows: int) -> Iterator[list[dict[str, Any]]]:
    n = 0
    for _ in range(pages):
        page = []
        for _ in range(rows):
            n += 1
            page.append({"id": n, "kind": "push", "occurred_at": start + timedelta(seconds=n)})
        yield page


def _resource(checkpointed: bool, initial: datetime, pages: int, rows: int) -> Any:
    import dlt

    from dlt_ops import with_checkpoints

    def fetch(occurred_at: Any = dlt.sources.incremental("occurred_at", initial_value=initial)):  # noqa: B008
        yield from _pages(initial, pages, rows)

    if checkpointed:
        fetch = with_checkpoints(cursor_field="occurred_at", frequency=10)(fetch)
    return dlt.resource(fetch, name="events", primary_key="id", write_disposition="append")


@contextmanager
def _in_run(engine: str, dataset: str, session: Any) -> Iterator[None]:
    """Make the extract run inside a dlt-ops run context sharing an open session, as
    ``dlt-ops pipeline run`` does (its ledger opened the session before extract)."""
    from dlt_ops.destinations import ResolvedDestination
    from dlt_ops.runner.context import RunContext, active_run

    ctx = RunContext(
        run_id="bench",
        source="bench",
        resources=(),
        window=None,
        config=None,  # type: ignore[arg-type]  # not read by checkpoints
        registry=_registry(),
        where=ResolvedDestination(engine, dataset, "bench_pipeline"),
        full_tier=True,
        open_session=lambda: session,
    )
    with active_run(ctx):
        yield


def _registry() -> Any:
    from dlt_ops.plugins import PluginRegistry

    return PluginRegistry()


def _sample(dest: Callable[[], Any], checkpointed: bool, i: int, args: Any, session: Any) -> float:
    import dlt

    with tempfile.TemporaryDirectory(prefix="bench-ck-") as work:
        pipeline = dlt.pipeline(
            pipeline_name=f"bench_{i}",
            destination=dest(),
            dataset_name=DATASET,
            pipelines_dir=str(Path(work) / "pipelines"),
        )
        # a fresh initial value per sample: a fresh checkpoint namespace, nothing to resume
        resource = _resource(checkpointed, T0 + timedelta(days=i), args.pages, args.rows)
        scope = _in_run(session.adapter.name, DATASET, session) if session else nullcontext()
        with scope:
            start = time.perf_counter()
            pipeline.extract(resource)
            return time.perf_counter() - start


def _measure(
    label: str, dest: Callable[[], Any], args: Any, session: Any = None
) -> tuple[str, list[float], list[float]]:
    _sample(dest, True, 10_000, args, session)  # warm-up: imports, table creation
    plain, ckpt = [], []
    for i in range(args.runs):
        # which variant goes first alternates, so a position effect (A/A checks of plain vs
        # plain here put the two positions 0.91-1.03 apart) cannot favour either variant
        for checkpointed in (False, True) if i % 2 == 0 else (True, False):
            took = _sample(dest, checkpointed, 2 * i + checkpointed, args, session)
            (ckpt if checkpointed else plain).append(took)
    return label, plain, ckpt


def _session(engine: str, credentials: str, root: Path) -> Any:
    from dlt_ops.adapters import ConnectionTarget, DestinationSession
    from dlt_ops.destinations import load_adapter

    target = ConnectionTarget(engine, DATASET, root, credentials, "bench_pipeline")
    return DestinationSession.open(load_adapter(_registry(), engine), target)


def _open_times(engine: str, credentials: str, root: Path, runs: int) -> list[float]:
    """Seconds to open a session, as the plain-dlt path does once per extract before its first
    page (connection or database instance; credential resolution not included): its floor."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        session = _session(engine, credentials, root)
        times.append(time.perf_counter() - start)
        session.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=100, help="rows per page")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-postgres", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the samples to this file")
    args = parser.parse_args()

    import logging

    import dlt
    import structlog

    # the per-checkpoint INFO lines are not what is measured: keep WARNING and above only
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-ck-db-") as tmp:
        db = str(Path(tmp) / "bench.duckdb")
        duck = lambda: dlt.destinations.duckdb(credentials=db)  # noqa: E731
        results.append(_measure("duckdb / plain dlt", duck, args))
        opens = {"duckdb": _open_times("duckdb", db, Path(tmp), args.runs)}
        with _session("duckdb", db, Path(tmp)) as session:
            results.append(_measure("duckdb / dlt-ops run", duck, args, session))
        if not args.skip_postgres:
            from dlt_ops.testing.postgres import running_postgres

            with running_postgres() as server:
                url = server.dlt_url
                pg = lambda: dlt.destinations.postgres(credentials=url)  # noqa: E731
                results.append(_measure("postgres / plain dlt", pg, args))
                opens["postgres"] = _open_times("postgres", url, Path(tmp), args.runs)
                with _session("postgres", url, Path(tmp)) as session:
                    results.append(_measure("postgres / dlt-ops run", pg, args, session))
    print(
        f"extract of {args.pages} pages x {args.rows} rows, frequency=10, "
        f"{args.runs} alternating runs per variant (target: throughput ratio >= 0.97)"
    )
    print(
        f"{'destination / path':<24}{'plain s':>9}{'ckpt s':>9}{'ratio (median)':>16}"
        f"{'ratio (best)':>14}{'added ms':>10}"
    )
    for label, plain, ckpt in results:
        p, c = statistics.median(plain), statistics.median(ckpt)
        # per extract, from each round's two samples: a fixed cost shows whatever the size
        added = statistics.median(b - a for a, b in zip(plain, ckpt, strict=True)) * 1000
        print(
            f"{label:<24}{p:>9.3f}{c:>9.3f}{p / c:>16.3f}{min(plain) / min(ckpt):>14.3f}"
            f"{added:>+10.0f}"
        )
    floors = ", ".join(f"{e} {statistics.median(t) * 1000:.1f} ms" for e, t in opens.items())
    print(f"opening a session (the plain-dlt path's floor, once per extract): {floors}")
    if args.json:
        doc = [{"path": label, "plain_s": plain, "checkpointed_s": ckpt,
                "session_open_s": opens[label.split(" / ")[0]] if "plain" in label else None}
               for label, plain, ckpt in results]  # fmt: skip
        args.json.write_text(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
