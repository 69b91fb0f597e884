"""Every benchmark in one run, side by side with the dlt-ops 0.1 reference: bench/RESULTS.md.

The reference (``dlt-ops[duckdb,postgres]==0.1.0``) is installed into a throwaway virtual
environment inside this run's temp dir (or ``--reference-venv DIR`` is reused). Each measure
builds its cases for both installs and times them interleaved (A, B, A, B, ...), every sample
a fresh process with compiled bytecode (see ``_timing.py``). The table written to ``--out``
holds, per measure, the reference's and dlt-ops' medians and minima, the figure compared with
the target (seconds, a ratio to the reference, or a ratio to plain dlt), and whether it is met;
then the machine it ran on, its load, and every case's raw figures.

A measure that fails is reported as failed (with its error in the notes); the others still run.
Apache Airflow (for the DAG factory) is installed, with this checkout's packages, into a
throwaway venv as well.

Run: .venv/bin/python bench/run_all.py [--runs 7] [--backfill-runs 2] [--out bench/RESULTS.md]
     [--reference-venv DIR | --no-reference] [--no-postgres] [--only help,status,...]
     [--smoke]   (tiny inputs, one sample: checks the scripts run; the figures mean nothing)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import bench_airflow
import bench_airflow_variables
import bench_backfill
import bench_checkpoints
import bench_dagster
import bench_run
import bench_status
from _timing import (
    OURS,
    REFERENCE_SPEC,
    REPO,
    Case,
    Install,
    bench_env,
    busy_note,
    compile_bytecode,
    init_project,
    peak_rss_mib,
    reference_install,
    time_interleaved,
)
from _timing import run as run_command

HERE = Path(__file__).resolve().parent


# ----------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Stat:
    """A median and a minimum, in seconds (``unit='s'``) or as a ratio (``unit='x'``)."""

    median: float
    low: float
    unit: str = "s"

    @classmethod
    def of(cls, samples: list[float], unit: str = "s") -> Stat:
        return cls(statistics.median(samples), min(samples), unit)

    def __str__(self) -> str:
        if self.unit == "s":
            return f"{self.median:.3f} s (min {self.low:.3f})"
        return f"{self.median:.2f}× (min {self.low:.2f})"


@dataclass
class Result:
    """One line of the table."""

    measure: str
    target: str
    reference: Stat | None = None
    ours: Stat | None = None
    figure: str = ""
    met: bool | None = None
    status: str = ""  # "not built", "failed", "skipped": why there is no figure

    def cells(self) -> list[str]:
        if self.status:
            return [self.measure, "—", "—", "—", self.target, self.status]
        verdict = "yes" if self.met else "**no**"
        return [self.measure, str(self.reference or "—"), str(self.ours or "—"), self.figure,
                self.target, verdict]  # fmt: skip


def ratio_stat(num: list[float], den: list[float]) -> Stat:
    """median(num) / median(den), and the smallest pair-by-pair ratio."""
    pairs = [a / b for a, b in zip(num, den, strict=True)]
    return Stat(statistics.median(num) / statistics.median(den), min(pairs), "x")


def at_most(value: float, limit: float) -> bool:
    return value <= limit


@dataclass
class Run:
    """What every measure needs: installs, sizes, a work dir, and where notes go."""

    installs: list[Install]
    work: Path
    runs: int
    backfill_runs: int
    smoke: bool
    postgres: bool
    notes: list[str] = field(default_factory=list)
    cases: list[Case] = field(default_factory=list)  # every timed case, for the detail table
    example_roots: list[Path] = field(default_factory=list)
    #: a measure's median seconds by fleet size, for the growth table (label -> {n: s})
    growth: dict[str, dict[int, float]] = field(default_factory=dict)

    @property
    def ref(self) -> Install | None:
        return self.installs[1] if len(self.installs) > 1 else None

    def time(self, cases: list[Case], runs: int | None = None, warmup: int = 1) -> None:
        time_interleaved(cases, self.runs if runs is None else runs, warmup=warmup)
        self.cases += cases


def _vs_reference(
    run: Run, measure: str, cases: list[Case], limit: float, *, seconds: bool = False
) -> Result:
    """``cases`` = [ours, reference?]: a ratio to the reference (or seconds) against ``limit``."""
    ours = Stat.of(cases[0].samples)
    ref = Stat.of(cases[1].samples) if len(cases) > 1 else None
    if seconds:
        return Result(measure, f"≤ {limit} s", ref, ours, f"{ours.median:.3f} s",
                      at_most(ours.median, limit))  # fmt: skip
    target = f"≤ {limit}× the reference"
    if ref is None:
        return Result(measure, target, None, ours, status="skipped (no reference)")
    ratio = ratio_stat(cases[0].samples, cases[1].samples)
    return Result(measure, target, ref, ours, f"{ratio.median:.2f}× ref (min {ratio.low:.2f})",
                  at_most(ratio.median, limit))  # fmt: skip


# ----------------------------------------------------------------------------- measures


def measure_help(run: Run) -> list[Result]:
    cases = []
    for install in run.installs:
        env = bench_env(run.work / "help")
        cases.append(Case(f"{install.label}: --help", [install.cli, "--help"], run.work, env))
    run.time(cases)
    return [_vs_reference(run, "`dlt-ops --help`", cases, 0.15, seconds=True)]


def measure_status(run: Run) -> list[Result]:
    cases = []
    for i, install in enumerate(run.installs):
        work = run.work / f"status{i}"
        env = bench_env(work)
        root = bench_status.example_after_one_run(install, work, env)
        run.example_roots.append(root)
        cases.append(bench_status.status_case(install, "status, 1 source, DuckDB", root, env))
    run.time(cases)
    return [_vs_reference(run, "`pipeline status`, 1 source, DuckDB", cases, 0.15)]


def measure_validate(run: Run) -> list[Result]:
    cases = []
    for i, install in enumerate(run.installs):
        work = run.work / f"validate{i}"
        env = bench_env(work)
        root = init_project(install, work, env)
        compile_bytecode(install, root)
        cmd = [install.cli, "pipeline", "validate"]
        cases.append(Case(f"{install.label}: validate, example project", cmd, root, env))
    run.time(cases)
    return [_vs_reference(run, "`pipeline validate`, example project", cases, 0.15)]


def measure_run(run: Run) -> list[Result]:
    size = 10 if run.smoke else 1_000
    name = bench_run.source_name(size)
    pairs = []
    for i, install in enumerate(run.installs):
        work = run.work / f"run{i}"
        root, env = bench_run.prepare(install, work, [size])
        ours = Case(f"{install.label}: pipeline run, {size:,} rows",
                    [install.cli, "pipeline", "run", "-s", name, "-y"], root, env)  # fmt: skip
        plain = Case(f"plain dlt ({install.label} venv): {size:,} rows",
                     [install.python, str(work / "plain" / f"plain_{name}.py")],
                     work / "plain", env)  # fmt: skip
        pairs.append((ours, plain))
    run.time([c for pair in pairs for c in pair])
    ratios = [ratio_stat(a.samples, b.samples) for a, b in pairs]
    ours = ratios[0]
    return [Result(f"`pipeline run` / plain dlt, {size:,} rows, DuckDB", "≤ 1.1× (keep)",
                   ratios[1] if len(ratios) > 1 else None, ours, f"{ours.median:.2f}×",
                   at_most(ours.median, 1.1))]  # fmt: skip


def measure_memory(run: Run) -> list[Result]:
    """Peak resident memory of ``pipeline run`` vs the plain dlt script (bench_run.py's pair),
    1 M rows, the process tree's peak (``wait4``); samples alternate, medians compared."""
    size = 1_000 if run.smoke else 1_000_000
    name = bench_run.source_name(size)
    work = run.work / "memory"
    root, env = bench_run.prepare(OURS, work, [size])
    ours_cmd = [OURS.cli, "pipeline", "run", "-s", name, "-y"]
    plain_cmd = [OURS.python, str(work / "plain" / f"plain_{name}.py")]
    ours, plain = [], []
    for _ in range(max(1, run.backfill_runs)):
        ours.append(peak_rss_mib(ours_cmd, cwd=root, env=env))
        plain.append(peak_rss_mib(plain_cmd, cwd=work / "plain", env=env))
    ratio = statistics.median(ours) / statistics.median(plain)
    run.notes.append(
        f"peak memory, {size:,} rows: `pipeline run` {statistics.median(ours):.0f} MiB, plain "
        f"dlt {statistics.median(plain):.0f} MiB (median of {len(ours)} each, the largest "
        "maxrss of each process tree)"
    )
    return [Result(f"peak memory of `pipeline run` / plain dlt's, {size:,} rows, DuckDB",
                   "≤ 1.1×", None, Stat(ratio, min(a / b for a, b in zip(ours, plain,
                   strict=True)), "x"), f"{ratio:.2f}×", at_most(ratio, 1.1))]  # fmt: skip


def measure_backfill(run: Run) -> list[Result]:
    days = 2 if run.smoke else 30
    overheads = [
        bench_backfill.overhead_cases(install, run.work / f"backfill{i}", days)
        for i, install in enumerate(run.installs)
    ]
    bench_backfill.time_overheads(overheads, run.backfill_runs)
    run.cases += [c for o in overheads for c in o.cases]
    ratios, per_chunk = [], []
    for o in overheads:
        ours, plain = o.marginal()
        ratios.append(ratio_stat(ours.samples, plain.samples))
        per_chunk.append((statistics.median(ours.samples), statistics.median(plain.samples)))
    mine = ratios[0]
    run.notes.append(
        "backfill marginal cost per chunk (median): "
        + "; ".join(
            f"{o.install.label} {a:.3f} s vs its plain loop's {b:.3f} s"
            for o, (a, b) in zip(overheads, per_chunk, strict=True)
        )  # fmt: skip
    )
    return [Result(f"backfill marginal cost per chunk / plain dlt loop's ({days} x 1d, DuckDB)",
                   "≤ 1.1×", ratios[1] if len(ratios) > 1 else None, mine,
                   f"{mine.median:.2f}×", at_most(mine.median, 1.1))]  # fmt: skip


def measure_workers(run: Run) -> list[Result]:
    measure = "backfill `--workers 4`, Postgres, speed-up vs the reference's sequential backfill"
    own = "backfill `--workers 4` / `--workers 1`, Postgres, speed-up (30 x 1d, I/O-bound)"
    if not run.postgres:
        return [Result(measure, "≥ 4×", status="skipped (--no-postgres)"),
                Result(own, "≥ 1.6×", status="skipped (--no-postgres)")]  # fmt: skip
    w = bench_backfill.workers(run.work / "workers", run.backfill_runs, run.ref)
    run.cases += [c for c in (w.one, w.four, w.reference) if c is not None]
    four = Stat.of(w.four.samples)
    # interleaved samples: median(--workers 1) / median(--workers 4), and the worst pair
    scaling = ratio_stat(w.one.samples, w.four.samples)
    one = statistics.median(w.one.samples)
    own_row = Result(own, "≥ 1.6×", None, scaling, f"{scaling.median:.2f}× faster",
                     scaling.median >= 1.6)  # fmt: skip
    run.notes.append(
        f"backfill on Postgres: dlt-ops --workers 1 {one:.1f} s, --workers 4 {four.median:.1f} s "
        f"(speed-up {one / four.median:.2f}×; workers are forked from a fork server with dlt "
        "imported); each reference sample in a fresh project copy and database (its chunk "
        "state lives in the one dataset it writes)"
    )
    if w.reference is None:
        return [Result(measure, "≥ 4×", None, four, status="skipped (no reference)"), own_row]
    ref = Stat.of(w.reference.samples)
    speed_up = ref.median / four.median
    return [Result(measure, "≥ 4×", ref, four, f"{speed_up:.2f}× faster", speed_up >= 4.0),
            own_row]  # fmt: skip


def measure_many_sources(run: Run) -> list[Result]:
    n, rows = (3, 10) if run.smoke else (bench_status.N_SOURCES, bench_status.RUNS_PER_SOURCE)
    if len(run.example_roots) != len(run.installs):  # `status` did not run (--only)
        run.example_roots = []
        for k, install in enumerate(run.installs):
            work = run.work / f"example{k}"
            root = bench_status.example_after_one_run(install, work, bench_env(work))
            run.example_roots.append(root)
    cases = bench_status.sources_cases(run.installs, run.example_roots, run.work, n, rows)
    run.time(cases)
    ours = Stat.of(cases[0].samples)
    ref = Stat.of(cases[1].samples) if len(cases) > 1 else None
    limit = bench_status.SOURCES_TARGET_S
    return [Result(f"`pipeline status`, {n} sources, {rows:,}-run DuckDB ledgers",
                   f"≤ {limit} s", ref, ours, f"{ours.median:.3f} s",
                   at_most(ours.median, limit))]  # fmt: skip


def measure_airflow(run: Run) -> list[Result]:
    """The DAG factory over 10, 100 and 1,000 sources, Airflow in a throwaway venv (see
    bench_airflow.py); the row is the 1,000-source project's, the growth table all three."""
    title = "Airflow DAG factory parsing a 1,000-source project (Phase 1)"
    if run.smoke:
        return [Result(title, "≤ 1 s", status="skipped (smoke: no Airflow install)")]
    python = bench_airflow.install_airflow(run.work / "airflow-venv")
    for n in bench_status.SCALE_SIZES:
        root = bench_airflow.project(run.work / f"airflow-project-{n}", n)
        samples = bench_airflow.measure(python, root, run.runs, run.work)
        run.growth.setdefault("Airflow DAG factory parse", {})[n] = statistics.median(
            [s["seconds"] for s in samples]
        )
    ours = Stat.of([s["seconds"] for s in samples])
    run.notes.append(
        f"Airflow: `{bench_airflow.AIRFLOW_SPEC}` with this checkout's core and DuckDB packages "
        "in a throwaway venv; each sample a fresh process that imports Airflow first (untimed, "
        f"as in a DAG processor), then times importing the factory and building "
        f"{samples[0]['dags']:.0f} DAG(s) with {samples[0]['tasks']:.0f} tasks"
    )
    return [Result(title, "≤ 1 s", None, ours, f"{ours.median:.3f} s", at_most(ours.median, 1.0))]


def measure_airflow_variables(run: Run) -> list[Result]:
    """Variable look-ups per backfill chunk task, dlt's provider off and kept (see
    bench_airflow_variables.py), in the Airflow venv of the factory row."""
    title = "Airflow Variable look-ups per backfill chunk task, dlt's provider off (kept)"
    if run.smoke:
        return [Result(title, "0", status="skipped (smoke: no Airflow install)")]
    venv = run.work / "airflow-venv"
    python = str(venv / "bin" / "python")
    if not (venv / "bin" / "airflow").exists():
        python = bench_airflow.install_airflow(venv)
    days = 4
    figures = bench_airflow_variables.measure(python, run.work / "airflow-variables", days)
    off, kept = (figures[k]["chunk_calls"] / days for k in ("off", "kept"))
    run.notes.append(
        f"Airflow Variable look-ups: a {days}-chunk backfill DAG under `dag.test()`, counted at "
        f"`airflow.models.Variable.get` per chunk task; kept (`dlt_airflow_secrets=True`): "
        f"{kept:.0f} per task ({figures['kept']['distinct_keys']:.0f} distinct keys), run "
        f"{figures['kept']['seconds']:.1f} s vs {figures['off']['seconds']:.1f} s off "
        "(a local SQLite metadata DB: no api-server hop)"
    )
    return [Result(title, "0", None, None, f"{off:.0f} ({kept:.0f} kept)", off == 0)]


def measure_dagster(run: Run) -> list[Result]:
    """build_definitions over 10, 100 and 1,000 sources, Dagster in its cached venv (see
    bench_dagster.py); the row is the 1,000-source project's, the growth table all three."""
    title = "Dagster build_definitions over a 1,000-source project (Phase 1)"
    if run.smoke:
        return [Result(title, "≤ 1 s", status="skipped (smoke: no Dagster install)")]
    python = bench_dagster.dagster_python()
    for n in bench_status.SCALE_SIZES:
        root = bench_dagster.project(run.work / f"dagster-project-{n}", n)
        samples = bench_dagster.measure(python, root, run.runs, run.work)
        run.growth.setdefault("Dagster definitions load", {})[n] = statistics.median(
            [s["seconds"] for s in samples]
        )
    ours = Stat.of([s["seconds"] for s in samples])
    run.notes.append(
        "Dagster: the cached venv of dlt_ops.testing.dagster; each sample a fresh process that "
        "imports Dagster first (untimed, as in a code server), then times importing the builder "
        f"and building {samples[0]['assets']:.0f} assets and {samples[0]['jobs']:.0f} "
        "partitioned jobs"
    )
    return [Result(title, "≤ 1 s", None, ours, f"{ours.median:.3f} s", at_most(ours.median, 1.0))]


def measure_scale(run: Run) -> list[Result]:
    """Every fleet-wide ledger reader (``bench_status.SCALE_READERS``) over 10, 100 and 1,000
    sources: on DuckDB (a ledger file per source) and on PostgreSQL (every source in one
    dataset). Ledgers are copied and seeded (``bench_status.duckdb_fleet`` and
    ``postgres_fleet``), never run; the rows are the largest fleet's, the growth table all."""
    sizes = (2, 3) if run.smoke else bench_status.SCALE_SIZES
    each = bench_status.SCALE_RUNS_EACH
    if not run.example_roots:  # `status` did not run (--only)
        work = run.work / "example0"
        run.example_roots.append(bench_status.example_after_one_run(OURS, work, bench_env(work)))
    ledger_db = run.example_roots[0] / f"{bench_status.SOURCE}_pipeline.duckdb"
    with ExitStack() as stack:
        server = None
        if run.postgres:
            from dlt_ops.testing.postgres import running_postgres

            server = stack.enter_context(running_postgres())
        fleets: list[tuple[str, int, Path, dict[str, str]]] = []
        for n in sizes:
            work = run.work / f"scale-duckdb-{n}"
            env = bench_env(work)
            root = bench_status.duckdb_fleet(OURS, work, env, ledger_db, n, each)
            fleets.append(("DuckDB, a ledger file per source", n, root, env))
            if server is not None:
                work = run.work / f"scale-postgres-{n}"
                env = bench_env(work)
                db = server.create_database(f"bench_scale_{n}")
                root = bench_status.postgres_fleet(OURS, work, env, db, n, each)
                fleets.append(("PostgreSQL, one dataset", n, root, env))
        return _time_fleets(run, fleets, sizes[-1])


def _time_fleets(
    run: Run, fleets: list[tuple[str, int, Path, dict[str, str]]], largest: int
) -> list[Result]:
    results = []
    for backend, n, root, env in fleets:
        _check_fleet(root, env, n)
        cases = {title: Case(f"dlt-ops: {title.replace('`', '')}, {n:,} sources, {backend}",
                             [OURS.cli, *args], root, env)
                 for title, args in bench_status.SCALE_READERS.items()}  # fmt: skip
        run.time(list(cases.values()))
        for title, case in cases.items():
            median = statistics.median(case.samples)
            run.growth.setdefault(f"{title}, {backend}", {})[n] = median
            if n == largest:
                ours = Stat.of(case.samples)
                limit = bench_status.SCALE_TARGET_S
                results.append(Result(f"{title}, {n:,} sources, {backend}", f"≤ {limit:g} s",
                                      None, ours, f"{median:.3f} s", median <= limit))  # fmt: skip
    return results


def _check_fleet(root: Path, env: dict[str, str], n: int) -> None:
    """Once before timing: status shows every source and the scheduler finds none due."""
    shown = bench_run_cmd([OURS.cli, "pipeline", "status"], root, env).count("Source: ")
    if shown != n:
        raise RuntimeError(f"status over {root} shows {shown} of {n} sources")
    ran = json.loads(bench_run_cmd([OURS.cli, "scheduler", "run", "--once", "--json"], root, env))
    if ran:
        raise RuntimeError(f"scheduler ran {len(ran)} source(s); the benchmark wants none due")


def bench_run_cmd(cmd: list[str], cwd: Path, env: dict[str, str]) -> str:
    return run_command(cmd, cwd=cwd, env=env).stdout


def measure_checkpoints(run: Run) -> list[Result]:
    out = run.work / "checkpoints.json"
    size = ["--pages", "2", "--rows", "5"] if run.smoke else []
    # an extract takes under a second, and the 3 % this target resolves is well inside this
    # machine's drift between minutes: twice the samples (+1) cost ~1 min more in all
    samples = run.runs if run.smoke else 2 * run.runs + 1
    size += ["--runs", str(samples)]
    cmd = [OURS.python, str(HERE / "bench_checkpoints.py"), *size, "--json", str(out)]
    if not run.postgres:
        cmd.append("--skip-postgres")
    env = bench_env(run.work / "checkpoints")
    subprocess.run(cmd, check=True, capture_output=True, text=True, env=env, timeout=1800)
    results, outside = [], []
    for path in json.loads(out.read_text()):
        opening = path.pop("session_open_s", None)
        found = bench_checkpoints.Samples(**path)
        # throughput = pages per second inside the extract (timed in the resource's generator
        # from its first page to the call after its last): plain window / checkpointed window
        ratio = ratio_stat(found.plain_pages, found.checkpointed_pages)
        results.append(
            Result(f"`@with_checkpoints` extract throughput / plain extract's ({found.path})",
                   "≥ 0.97", None, ratio, f"{ratio.median:.3f}", ratio.median >= 0.97)
        )  # fmt: skip
        floor = ""
        if opening:
            floor = f", of which opening a session {statistics.median(opening) * 1000:.1f} ms"
        outside.append(
            f"{found.path} {found.fixed_ms():+.0f} ms per extract{floor} (whole extract "
            f"{statistics.median(found.plain):.3f} s plain, ratio {found.whole_ratio():.3f})"
        )
    run.notes.append(
        f"checkpoints: {samples} samples per variant, in one process per path, variants "
        "alternating, no reference (0.1 has no comparable path). Throughput is the page rate: "
        "each extract is timed inside the resource's generator from its first page to the call "
        "after its last, a window holding dlt's and the checkpoint wrapper's work on every page; "
        "the figure is median(plain window) / median(checkpointed window). What checkpointing "
        "adds once per extract, outside that window (median of each round's difference; the "
        "plain-dlt path opens a session before its first page, since the resume state is read "
        "from the destination before the API is asked for anything), and the whole-extract "
        "ratio it leaves on this extract's length: " + "; ".join(outside)
    )
    return results


#: how a measure is named in the table when it failed before producing its own row
TITLES = {
    "help": "`dlt-ops --help`",
    "status": "`pipeline status`, 1 source, DuckDB",
    "validate": "`pipeline validate`, example project",
    "run": "`pipeline run` / plain dlt, 1,000 rows, DuckDB",
    "memory": "peak memory of `pipeline run` / plain dlt's, 1,000,000 rows, DuckDB",
    "backfill": "backfill marginal cost per chunk / plain dlt loop's",
    "workers": "backfill `--workers 4`, Postgres, speed-up vs the reference",
    "sources": "`pipeline status`, 100 sources, 10,000-run DuckDB ledgers",
    "scale": "fleet-wide readers over 10 / 100 / 1,000 sources (status, runs list, scheduler, "
    "report, metrics)",
    "airflow": "Airflow DAG factory parsing a 1,000-source project (Phase 1)",
    "airflow_variables": (
        "Airflow Variable look-ups per backfill chunk task, dlt's provider off (kept)"
    ),
    "dagster": "Dagster build_definitions over a 1,000-source project (Phase 1)",
    "checkpoints": "`@with_checkpoints` extract throughput / plain extract's",
}


MEASURES: dict[str, Callable[[Run], list[Result]]] = {  # in the table's order
    "help": measure_help,
    "status": measure_status,
    "validate": measure_validate,
    "run": measure_run,
    "memory": measure_memory,
    "backfill": measure_backfill,
    "workers": measure_workers,
    "sources": measure_many_sources,
    "airflow": measure_airflow,
    "airflow_variables": measure_airflow_variables,
    "dagster": measure_dagster,
    "scale": measure_scale,
    "checkpoints": measure_checkpoints,
}
#: run order: the backfills last, so their figures are the latest (code others are changing)
RUN_ORDER = ("help", "status", "validate", "run", "memory", "sources", "airflow",
             "airflow_variables", "dagster", "scale", "checkpoints", "backfill",
             "workers")  # fmt: skip


# ----------------------------------------------------------------------------- report


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem_kb = next(
            int(line.split()[1])
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        )
        mem = f"{mem_kb / 1024 / 1024:.1f} GiB RAM"
    except (OSError, StopIteration, ValueError):
        mem = "RAM unknown"
    return (
        f"{cpu}, {os.cpu_count()} cores, {mem}; {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}"
    )


def commit() -> str:
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True)
        return done.stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "packages")
    return head + (" plus uncommitted changes under packages/" if dirty else "")


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


#: slack of the growth check: a measure grows faster than linearly when its 100 -> 1,000 rise
#: exceeds this many times what its 10 -> 100 slope predicts, plus GROWTH_FLOOR_S of noise
GROWTH_SLACK, GROWTH_FLOOR_S = 1.5, 0.05


def faster_than_linear(by_n: dict[int, float]) -> bool | None:
    """Whether the cost grew faster than linearly over three fleet sizes (``None``: fewer)."""
    if len(by_n) < 3:
        return None
    (a, ta), (b, tb), (c, tc) = sorted(by_n.items())[:3]
    slope = max(tb - ta, 0.0) / (b - a)
    return tc - tb > GROWTH_SLACK * slope * (c - b) + GROWTH_FLOOR_S


def growth_table(growth: dict[str, dict[int, float]]) -> list[str]:
    """Median seconds of each scale measure by fleet size, and whether it grew faster than
    linearly (:func:`faster_than_linear`)."""
    if not growth:
        return []
    sizes = sorted({n for by_n in growth.values() for n in by_n})
    lines = ["## Growth with sources", "",
             "Median seconds by number of sources; per source = the rise from the previous "
             "size, divided by the sources added. A row grows faster than linearly when its "
             f"last rise exceeds {GROWTH_SLACK}× what its first slope predicts, plus "
             f"{GROWTH_FLOOR_S} s.", "",
             "| measure | " + " | ".join(f"{n:,}" for n in sizes)
             + " | per source, last step | faster than linear |",
             "|---|" + "---:|" * (len(sizes) + 1) + "---|"]  # fmt: skip
    for label, by_n in growth.items():
        cells = [f"{by_n[n]:.3f} s" if n in by_n else "—" for n in sizes]
        known = sorted(by_n)
        step = "—"
        if len(known) >= 2:
            (p, tp), (q, tq) = (known[-2], by_n[known[-2]]), (known[-1], by_n[known[-1]])
            step = f"{(tq - tp) / (q - p) * 1000:.2f} ms"
        verdict = {None: "—", True: "**yes**", False: "no"}[faster_than_linear(by_n)]
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {step} | {verdict} |")
    return [*lines, ""]


def render(results: list[Result], run: Run, started: datetime, load_start: str) -> str:
    ref = run.ref
    lines = [
        "# Benchmark results",
        "",
        f"Produced by `bench/run_all.py` ({' '.join(sys.argv[1:]) or 'defaults'}), "
        f"{started:%Y-%m-%d %H:%M} UTC, in {(datetime.now(UTC) - started).seconds / 60:.0f} min.",
        "",
        f"- machine: {machine()}",
        f"- load average (1/5/15 min) at start {load_start}, at end {load()}",
        f"- dlt-ops: this checkout at {commit()}",
        "- reference: "
        + (
            f"`{REFERENCE_SPEC}` installed by the run into its own throwaway venv"
            if ref
            else "not measured"
        ),  # fmt: skip
        f"- samples: medians of {run.runs} ({run.backfill_runs} for backfills), each a fresh "
        "process with compiled bytecode, cases interleaved after a warm-up",
        "",
    ]
    busy = busy_note()
    if busy:
        lines += [f"**Note:** {busy}.", ""]
    header = ["measure", "reference 0.1", "dlt-ops", "figure", "target", "met"]
    lines += ["| " + " | ".join(header) + " |", "|---|---:|---:|---:|---|---|"]
    lines += ["| " + " | ".join(r.cells()) + " |" for r in results]
    lines.append("")
    lines += growth_table(run.growth)
    if run.notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in run.notes] + [""]
    lines += ["## Every case", "", "| case | median | min | max | samples |"]
    lines.append("|---|---:|---:|---:|---:|")
    for case in run.cases:
        if case.samples:
            s = case.samples
            lines.append(f"| {case.label} | {statistics.median(s):.3f} s | {min(s):.3f} s | "
                         f"{max(s):.3f} s | {len(s)} |")  # fmt: skip
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    # 7, not 5: on a shared 2-core machine 5 pairs left ratio medians swinging by +-0.1
    parser.add_argument("--runs", type=int, default=7, help="timed samples per case (default 7)")
    parser.add_argument("--backfill-runs", type=int, default=2, help="for backfills (default 2)")
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    parser.add_argument("--reference-venv", type=Path, help="reuse this reference venv")
    parser.add_argument("--no-reference", action="store_true", help="skip the 0.1 reference")
    parser.add_argument("--no-postgres", action="store_true", help="skip PostgreSQL measures")
    parser.add_argument("--only", help=f"comma-separated subset of: {','.join(MEASURES)}")
    parser.add_argument("--smoke", action="store_true", help="tiny inputs, one sample each")
    args = parser.parse_args()
    if args.smoke:
        args.runs, args.backfill_runs = 1, 1
    chosen = args.only.split(",") if args.only else list(MEASURES)
    unknown = set(chosen) - set(MEASURES)
    if unknown:
        parser.error(f"unknown measure(s): {', '.join(sorted(unknown))}")
    started, load_start = datetime.now(UTC), load()
    with tempfile.TemporaryDirectory(prefix="dltops-bench-all-") as tmp:
        work = Path(tmp)
        notes: list[str] = []
        venv = args.reference_venv or work / "reference-venv"  # throwaway unless given
        ref = reference_install(not args.no_reference, notes, venv)
        installs = [OURS] + ([ref] if ref else [])
        for install in installs:
            compile_bytecode(install)
        run = Run(installs, work, args.runs, args.backfill_runs, args.smoke,
                  not args.no_postgres, notes)  # fmt: skip
        results: dict[str, list[Result]] = {}
        for name in sorted(chosen, key=RUN_ORDER.index):
            print(f"[{datetime.now(UTC):%H:%M:%S}] {name} ...", file=sys.stderr, flush=True)
            start = time.perf_counter()
            try:
                results[name] = MEASURES[name](run)
            except Exception as exc:  # noqa: BLE001 - one failing measure must not lose the rest
                results[name] = [Result(TITLES.get(name, name), "—", status="failed")]
                run.notes.append(f"{name} failed: {str(exc).strip()[:600]}")
                traceback.print_exc()
            print(f"  {name}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
        table = [row for name in MEASURES if name in results for row in results[name]]
        args.out.write_text(render(table, run, started, load_start))
    print(args.out.read_text())


if __name__ == "__main__":
    main()
