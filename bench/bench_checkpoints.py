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

Two figures per path, because checkpointing costs twice:
* throughput: the rate at which pages go through the extract, timed inside the resource's
  own generator from its first page to the moment it is asked for the page after its last.
  That window holds dlt's and the checkpoint wrapper's work on every page (the wrapper's
  count, cursor read and hand-over to its writer thread) and nothing done once per extract.
  "ratio" is plain rate / checkpointed rate; the target applies to it.
* the fixed cost of one extract, in ms: everything outside that window (opening the session,
  reading the resume state, the completion), checkpointed minus plain, median over rounds.
  The plain-dlt path opens a session once per extract before its first page (the resume state
  is read before the API is asked for anything); the last line gives what that open costs.
The whole-extract ratio (plain s / checkpointed s) is printed too: on a short extract the fixed
cost weighs in it, on a long one it vanishes.

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
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")

T0 = datetime(2026, 1, 1, tzinfo=UTC)
DATASET = "bench_data"


def _pages(
    start: datetime, pages: int, rows: int, window: list[float]
) -> Iterator[list[dict[str, Any]]]:
    """The pages; ``window`` gets two clock readings: just before the first page is handed
    out, and when the generator is asked for more after its last (all pages went through)."""
    n = 0
    for _ in range(pages):
        page = []
        for _ in range(rows):
            n += 1
            page.append({"id": n, "kind": "push", "occurred_at": start + timedelta(seconds=n)})
        if not window:
            window.append(time.perf_counter())
        yield page
    window.append(time.perf_counter())


def _resource(
    checkpointed: bool, initial: datetime, pages: int, rows: int, window: list[float]
) -> Any:
    import dlt

    from dlt_ops import with_checkpoints

    def fetch(occurred_at: Any = dlt.sources.incremental("occurred_at", initial_value=initial)):  # noqa: B008
        yield from _pages(initial, pages, rows, window)

    if checkpointed:
        fetch = with_checkpoints(cursor_field="occurred_at", frequency=10)(fetch)
    return dlt.resource(fetch, name="events", primary_key="id", write_disposition="append")


@contextmanager
def _in_run(engine: str, dataset: str, session: Any) -> Iterator[None]:
    """Make the extract run inside a dlt-ops run context sharing an open session, as
    ``dlt-ops pipeline run`` does (its ledger opened the session before extract)."""
    from dlt_ops.runner.context import RunContext, active_run
    from dlt_ops.target import Target, Tier

    ctx = RunContext(
        run_id="bench",
        source="bench",
        resources=(),
        window=None,
        config=None,  # type: ignore[arg-type]  # not read by checkpoints
        registry=_registry(),
        target=Target(engine, dataset, "bench_pipeline", database="bench", tier=Tier.FULL),
        open_session=lambda: session,
    )
    with active_run(ctx):
        yield


def _registry() -> Any:
    from dlt_ops.plugins import PluginRegistry

    return PluginRegistry()


def _sample(
    dest: Callable[[], Any], checkpointed: bool, i: int, args: Any, session: Any
) -> tuple[float, float]:
    """(seconds of the whole ``pipeline.extract``, seconds of its page window)."""
    import dlt

    with tempfile.TemporaryDirectory(prefix="bench-ck-") as work:
        pipeline = dlt.pipeline(
            pipeline_name=f"bench_{i}",
            destination=dest(),
            dataset_name=DATASET,
            pipelines_dir=str(Path(work) / "pipelines"),
        )
        # a fresh initial value per sample: a fresh checkpoint namespace, nothing to resume
        window: list[float] = []
        resource = _resource(checkpointed, T0 + timedelta(days=i), args.pages, args.rows, window)
        scope = _in_run(session.adapter.name, DATASET, session) if session else nullcontext()
        with scope:
            start = time.perf_counter()
            pipeline.extract(resource)
            took = time.perf_counter() - start
        first, last = window
        return took, last - first


@dataclass
class Samples:
    """One path's samples, in seconds: whole extracts and their page windows, per variant."""

    path: str
    plain: list[float] = field(default_factory=list)
    checkpointed: list[float] = field(default_factory=list)
    plain_pages: list[float] = field(default_factory=list)
    checkpointed_pages: list[float] = field(default_factory=list)

    def add(self, checkpointed: bool, took: float, pages: float) -> None:
        (self.checkpointed if checkpointed else self.plain).append(took)
        (self.checkpointed_pages if checkpointed else self.plain_pages).append(pages)

    def throughput_ratio(self) -> float:
        """Plain page rate / checkpointed page rate (same pages: the windows' inverse ratio)."""
        return statistics.median(self.plain_pages) / statistics.median(self.checkpointed_pages)

    def whole_ratio(self) -> float:
        return statistics.median(self.plain) / statistics.median(self.checkpointed)

    def fixed_ms(self) -> float:
        """Median over rounds of what checkpointing adds outside the page window."""
        outside = zip(self.plain, self.plain_pages, self.checkpointed, self.checkpointed_pages,
                      strict=True)  # fmt: skip
        return statistics.median((c - cw) - (p - pw) for p, pw, c, cw in outside) * 1000


def _measure(label: str, dest: Callable[[], Any], args: Any, session: Any = None) -> Samples:
    _sample(dest, True, 10_000, args, session)  # warm-up: imports, table creation
    samples = Samples(label)
    for i in range(args.runs):
        # which variant goes first alternates, so a position effect (A/A checks of plain vs
        # plain here put the two positions 0.91-1.03 apart) cannot favour either variant
        for checkpointed in (False, True) if i % 2 == 0 else (True, False):
            samples.add(checkpointed, *_sample(dest, checkpointed, 2 * i + checkpointed, args,
                                               session))  # fmt: skip
    return samples


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
    if min(args.pages, args.rows, args.runs) < 1:
        parser.error("--pages, --rows and --runs must be at least 1 (the page window needs a page)")

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
        f"{'destination / path':<24}{'plain pages/s':>14}{'ckpt pages/s':>14}{'ratio':>8}"
        f"{'whole extract':>15}{'fixed ms':>10}"
    )
    for result in results:
        rates = [args.pages / statistics.median(w)
                 for w in (result.plain_pages, result.checkpointed_pages)]  # fmt: skip
        print(
            f"{result.path:<24}{rates[0]:>14.0f}{rates[1]:>14.0f}"
            f"{result.throughput_ratio():>8.3f}{result.whole_ratio():>15.3f}"
            f"{result.fixed_ms():>+10.0f}"
        )
    floors = ", ".join(f"{e} {statistics.median(t) * 1000:.1f} ms" for e, t in opens.items())
    print(f"opening a session (the plain-dlt path's floor, once per extract): {floors}")
    if args.json:
        doc = [{**asdict(result),
                "session_open_s": opens[result.path.split(" / ")[0]]
                if "plain" in result.path else None}
               for result in results]  # fmt: skip
        args.json.write_text(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
