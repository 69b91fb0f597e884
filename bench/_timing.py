"""Shared helpers for the runs-ledger benchmarks (``bench_run.py``, ``bench_status.py``).

Not a test module: the scripts print a table. Everything here is about measuring fairly:

- every command runs in a fresh process, with compiled bytecode (``compileall`` once, and
  ``PYTHONDONTWRITEBYTECODE`` removed from the child environment so nothing is recompiled in
  memory on every start), dlt telemetry off and dlt's data dir in the benchmark's temp dir;
- cases that are compared are timed *interleaved* (A, B, A, B, ...) after one untimed warm-up
  each, so machine noise hits both sides alike;
- the dlt-ops 0.1 reference lives in its own venv and is installed on demand, or skipped with
  a note when it cannot be.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OURS_VENV = REPO / ".venv"
REFERENCE_VENV = Path(os.environ.get("DLTOPS_REFERENCE_VENV", "/tmp/dltops-ref"))
REFERENCE_SPEC = "dlt-ops[duckdb,postgres]==0.1.0"
#: ``DLTOPS_BENCH_SMOKE=1``: the smoke test (tests/test_bench_smoke.py) only checks that the
#: scripts run; no bytecode compilation and no warm-up runs, and the figures mean nothing.
SMOKE = os.environ.get("DLTOPS_BENCH_SMOKE") == "1"


# ----------------------------------------------------------------------------- environments


@dataclass(frozen=True)
class Install:
    """One dlt-ops installation: its venv's python and CLI."""

    label: str
    venv: Path

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    @property
    def cli(self) -> str:
        return str(self.venv / "bin" / "dlt-ops")


OURS = Install("dlt-ops", OURS_VENV)


def bench_env(workdir: Path, **extra: str) -> dict[str, str]:
    """The child environment: bytecode on, telemetry off, dlt's data dir under ``workdir``."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # users' interpreters cache bytecode
    env.pop("DLT_PROJECT_DIR", None)
    env["RUNTIME__DLTHUB_TELEMETRY"] = "false"
    env["DLT_DATA_DIR"] = str(workdir / "dlt-data")
    env["NO_COLOR"] = "1"
    env.update(extra)
    return env


def compile_bytecode(install: Install, *extra_dirs: Path) -> None:
    """``compileall`` the install's site-packages (and workspace sources, and ``extra_dirs``).

    Stale or missing ``.pyc`` files are what ``PYTHONDONTWRITEBYTECODE=1`` on this machine
    leaves behind; users have compiled bytecode, so the benchmark must too. Up-to-date files
    are skipped, so this is cheap after the first time. Skipped under :data:`SMOKE`.
    """
    if SMOKE:
        return
    dirs = [_site_packages(install), *extra_dirs]
    if install.venv == OURS_VENV:
        dirs += sorted((REPO / "packages").glob("*/src"))
        # sources measured from another checkout (PYTHONPATH shadows the editable installs)
        dirs += [Path(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    subprocess.run(
        [install.python, "-m", "compileall", "-q", "-j", "0", *map(str, dirs)],
        check=False,  # a file that does not compile is the product's problem, not the bench's
        stdout=subprocess.DEVNULL,
        env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    )


def _site_packages(install: Install) -> Path:
    out = subprocess.run(
        [install.python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip())


def reference_install(
    enabled: bool, notes: list[str], venv: Path = REFERENCE_VENV
) -> Install | None:
    """The dlt-ops 0.1 reference in its own venv (``venv``, default ``$DLTOPS_REFERENCE_VENV``
    or /tmp/dltops-ref), installed if missing; ``None`` with a note when it cannot be."""
    if not enabled:
        notes.append("reference: skipped (--no-reference)")
        return None
    ref = Install("ref-0.1", venv)
    if Path(ref.cli).exists():
        return ref
    uv = shutil.which("uv")
    base = [uv] if uv else [sys.executable, "-m", "uv"]
    env = dict(os.environ, UV_COMPILE_BYTECODE="1", UV_PYTHON_DOWNLOADS="never")
    try:
        subprocess.run(
            [*base, "venv", str(venv), "-p", "3.11", "-q"],
            check=True,
            capture_output=True,
            env=env,
            timeout=120,
        )
        subprocess.run(
            [*base, "pip", "install", "-q", "-p", ref.python, REFERENCE_SPEC],
            check=True,
            capture_output=True,
            env=env,
            timeout=300,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        why = getattr(exc, "stderr", b"") or str(exc)
        why = why.decode(errors="replace") if isinstance(why, bytes) else why
        notes.append(f"reference: skipped, could not install {REFERENCE_SPEC}: {why.strip()[:200]}")
        return None
    return ref


# ----------------------------------------------------------------------------- running


def run(
    cmd: Sequence[str], *, cwd: Path, env: dict[str, str], timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    """Run ``cmd``; raise with its output when it fails (a failing command is no benchmark)."""
    done = subprocess.run(
        list(cmd), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"`{' '.join(cmd)}` in {cwd} exited {done.returncode}\n"
            f"--- stdout\n{done.stdout[-2000:]}\n--- stderr\n{done.stderr[-4000:]}"
        )
    return done


@dataclass
class Case:
    """One timed command: a fresh process per sample."""

    label: str
    cmd: Sequence[str]
    cwd: Path
    env: dict[str, str]
    samples: list[float] = field(default_factory=list)

    def once(self) -> float:
        start = time.perf_counter()
        run(self.cmd, cwd=self.cwd, env=self.env)
        return time.perf_counter() - start


class FreshCopy(Case):
    """A case run in a new copy of its project per sample: fresh DuckDB files, dlt state and
    chunk state, for commands a re-run would short-cut (a backfill skips completed chunks).
    The copy is made before the clock starts and removed after it stops."""

    counter = itertools.count()

    def once(self) -> float:
        copy = self.cwd.parent / f"{self.cwd.name}-sample{next(self.counter)}"
        shutil.copytree(self.cwd, copy, symlinks=True)
        env = dict(self.env, DLT_DATA_DIR=str(copy / "dlt-data"))
        try:
            start = time.perf_counter()
            run(self.cmd, cwd=copy, env=env)
            return time.perf_counter() - start
        finally:
            shutil.rmtree(copy, ignore_errors=True)


def time_interleaved(cases: Sequence[Case], runs: int, *, warmup: int = 1) -> None:
    """Warm each case up, then time them round-robin ``runs`` times (fills ``case.samples``).

    Each round starts one case later than the last (A B C, B C A, C A B, ...): a case that
    always ran right after the same neighbour would carry what that neighbour leaves behind
    (dirty pages still being written back, a busier moment of the host) in every sample.
    Sample ``i`` of every case still comes from round ``i``, so pair-by-pair ratios hold.
    """
    if SMOKE:
        warmup = 0
    for case in cases:
        for _ in range(warmup):
            case.once()
    for round_no in range(runs):
        shift = round_no % len(cases) if cases else 0
        for case in [*cases[shift:], *cases[:shift]]:
            case.samples.append(case.once())


# ----------------------------------------------------------------------------- reporting


@dataclass
class Row:
    """One table line: seconds (``unit='s'``) or a ratio (``unit='x'``)."""

    what: str
    median: float
    low: float
    high: float
    unit: str = "s"
    target: str = "-"
    verdict: str = ""


def seconds_row(case: Case, *, limit: float | None = None, what: str | None = None) -> Row:
    """Median/min/max of a case's samples; PASS/FAIL against ``limit`` seconds if given."""
    med = statistics.median(case.samples)
    target = f"<= {limit:.2f} s" if limit is not None else "-"
    verdict = "" if limit is None else ("PASS" if med <= limit else "FAIL")
    return Row(what or case.label, med, min(case.samples), max(case.samples), "s", target, verdict)


def ratio_row(what: str, num: Case, den: Case, *, limit: float | None = None) -> Row:
    """median(num) / median(den); min/max over the interleaved pairs' own ratios."""
    ratio = statistics.median(num.samples) / statistics.median(den.samples)
    pairs = [a / b for a, b in zip(num.samples, den.samples, strict=True)]
    target = f"<= {limit:.2f} x" if limit is not None else "-"
    verdict = "" if limit is None else ("PASS" if ratio <= limit else "FAIL")
    return Row(what, ratio, min(pairs), max(pairs), "x", target, verdict)


def print_table(title: str, rows: Sequence[Row], notes: Sequence[str] = ()) -> None:
    """The benchmark's output: one aligned table, then notes."""
    width = max([len("what"), *(len(r.what) for r in rows)]) + 2
    print(f"\n{title}")
    header = f"{'what':<{width}}{'median':>10}{'min':>10}{'max':>10}  {'target':<14}verdict"
    print(header)
    print("-" * len(header))
    for r in rows:
        fmt = (lambda v: f"{v:.3f} s") if r.unit == "s" else (lambda v: f"{v:.2f} x")
        print(
            f"{r.what:<{width}}{fmt(r.median):>10}{fmt(r.low):>10}{fmt(r.high):>10}  "
            f"{r.target:<14}{r.verdict}"
        )
    for note in notes:
        print(f"note: {note}")
    sys.stdout.flush()


def machine_note() -> str:
    """Load average and cores, printed with every table (timings depend on them)."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return (
        f"{os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, "
        f"Python {sysconfig.get_python_version()}"
    )


def busy_note(threshold: float = 0.5) -> str | None:
    """A warning when the machine was not idle (1-minute load per core above ``threshold``)."""
    if not hasattr(os, "getloadavg"):
        return None
    per_core = os.getloadavg()[0] / (os.cpu_count() or 1)
    if per_core <= threshold:
        return None
    return (
        f"the machine was NOT idle (load {per_core:.2f} per core): other processes shared the "
        "CPUs, so absolute seconds are inflated; interleaved ratios are the steadier figures"
    )


# ----------------------------------------------------------------------------- projects


def init_project(install: Install, parent: Path, env: dict[str, str], name: str = "demo") -> Path:
    """``dlt-ops init NAME --example`` with ``install``'s CLI; returns the project root."""
    parent.mkdir(parents=True, exist_ok=True)
    run([install.cli, "init", name, "--example"], cwd=parent, env=env)
    return parent / name


def add_source(root: Path, name: str, module_text: str, *, dataset: str, extra: str = "") -> None:
    """Write ``my_pipeline/source/<name>.py`` and its ``[sources.<name>]`` config section."""
    (root / "my_pipeline" / "source" / f"{name}.py").write_text(module_text)
    with (root / ".dlt" / "config.toml").open("a") as f:
        f.write(
            f'\n[sources.{name}]\n\n[sources.{name}.dlt_ops]\nschedule = "@daily"\n'
            f'dataset = "{dataset}"\n{extra}'
        )


def set_source_option(root: Path, source: str, key: str, value: str) -> None:
    """Add ``key = "value"`` to ``[sources.<source>.dlt_ops]`` (appended right after it)."""
    config = root / ".dlt" / "config.toml"
    header = f"[sources.{source}.dlt_ops]\n"
    text = config.read_text()
    if header not in text:
        raise ValueError(f"{config} has no {header.strip()}")
    config.write_text(text.replace(header, f'{header}{key} = "{value}"\n', 1))


#: The 15 seed columns every dlt-ops version's ledger has (0.1 has exactly these).
SEED_COLUMNS = (
    "pipeline_name, source_section, resource_name, destination, dataset, run_id, dlt_run_id, "
    "backfill_id, trigger_source, started_at, completed_at, status, records_extracted, "
    "records_loaded, error_summary"
)


def seed_ledger_sql(
    dialect: str, table: str, rows: int, sources: Sequence[str], destination: str, dataset: str
) -> str:
    """One ``INSERT ... SELECT`` adding ``rows`` historical runs spread round-robin over
    ``sources``, one minute apart, all older than any real run (every 50th one failed)."""
    if dialect == "duckdb":
        series = f"range({rows}) AS t(i)"
    else:
        series = f"generate_series(0, {rows - 1}) AS t(i)"
    names = "ARRAY[" + ", ".join(f"'{s}'" for s in sources) + "]"
    k = len(sources)
    # 1-based array subscripts in both engines
    source = f"({names})[(i % {k}) + 1]"
    started = "(TIMESTAMPTZ '2020-01-01 00:00:00+00' + i * INTERVAL '1 minute')"
    return (
        f"INSERT INTO {table} ({SEED_COLUMNS}) SELECT "
        f"{source} || '_pipeline', {source}, NULL, '{destination}', '{dataset}', "
        f"md5(CAST(i AS VARCHAR)), CAST(i AS VARCHAR), NULL, 'cli', {started}, "
        f"{started} + INTERVAL '30 seconds', "
        f"CASE WHEN i % 50 = 0 THEN 'failed' ELSE 'completed' END, 100, 100, "
        f"CASE WHEN i % 50 = 0 THEN 'RuntimeError: seeded failure' ELSE NULL END "
        f"FROM {series}"
    )


def seed_duckdb(
    db_file: Path, dataset: str, rows: int, sources: Sequence[str], *, replace: bool = False
) -> None:
    """Add (or, with ``replace``, set) ``rows`` seeded runs in ``<dataset>._dlt_ops_runs``."""
    import duckdb

    table = f'"{dataset}"."_dlt_ops_runs"'
    con = duckdb.connect(str(db_file))
    try:
        if replace:
            con.execute(f"DELETE FROM {table}")
        if rows > 0:
            con.execute(seed_ledger_sql("duckdb", table, rows, sources, "duckdb", dataset))
        con.execute("CHECKPOINT")
    finally:
        con.close()


def seed_postgres(
    url: str, dataset: str, rows: int, sources: Sequence[str], *, replace: bool = False
) -> None:
    """As :func:`seed_duckdb` on PostgreSQL, then ``ANALYZE`` (what autovacuum does soon after)."""
    import psycopg

    table = f'"{dataset}"."_dlt_ops_runs"'
    with psycopg.connect(url, autocommit=True) as con:
        if replace:
            con.execute(f"DELETE FROM {table}")
        if rows > 0:
            con.execute(seed_ledger_sql("postgres", table, rows, sources, "postgres", dataset))
        con.execute(f"ANALYZE {table}")


def add_recent_run_duckdb(db_file: Path, dataset: str, source: str) -> None:
    """One completed run of ``source`` that started a minute ago: its schedule is not due."""
    import duckdb

    con = duckdb.connect(str(db_file))
    try:
        con.execute(
            f'INSERT INTO "{dataset}"."_dlt_ops_runs" ({SEED_COLUMNS}) VALUES (?, ?, NULL, '
            "'duckdb', ?, md5('recent'), 'recent', NULL, 'cli', now() - INTERVAL 1 MINUTE, "
            "now(), 'completed', 1, 1, NULL)",
            [f"{source}_pipeline", source, dataset],
        )
        con.execute("CHECKPOINT")
    finally:
        con.close()


def add_recent_runs_postgres(url: str, dataset: str, sources: Sequence[str]) -> None:
    """:func:`add_recent_run_duckdb` for every one of ``sources``, in one statement."""
    import psycopg

    names = "ARRAY[" + ", ".join(f"'{s}'" for s in sources) + "]"
    with psycopg.connect(url, autocommit=True) as con:
        con.execute(
            f'INSERT INTO "{dataset}"."_dlt_ops_runs" ({SEED_COLUMNS}) SELECT s || \'_pipeline\', '
            f"s, NULL, 'postgres', '{dataset}', md5('recent' || s), 'recent', NULL, 'cli', "
            "now() - INTERVAL '1 minute', now(), 'completed', 1, 1, NULL "
            f"FROM unnest({names}) AS s"
        )
        con.execute(f'ANALYZE "{dataset}"."_dlt_ops_runs"')


def peak_rss_mib(cmd: Sequence[str], *, cwd: Path, env: dict[str, str]) -> float:
    """Run ``cmd`` once; the peak resident memory of it and its waited-for descendants, MiB
    (Linux ``wait4``: the largest ``maxrss`` of the process tree)."""
    proc = subprocess.Popen(list(cmd), cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)  # fmt: skip
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"`{' '.join(cmd)}` exited {proc.returncode}\n{err[-3000:]!r}")
    return usage.ru_maxrss / 1024  # KiB on Linux


def count_ledger_duckdb(db_file: Path, dataset: str) -> int:
    """Rows in the ledger (to print that the seeding did what the table claims)."""
    import duckdb

    con = duckdb.connect(str(db_file), read_only=True)
    try:
        return int(con.execute(f'SELECT COUNT(*) FROM "{dataset}"."_dlt_ops_runs"').fetchone()[0])
    finally:
        con.close()


def timed(label: str, fn: Callable[[], object]) -> object:
    """Run a setup step, printing how long it took (stderr, so tables stay clean)."""
    start = time.perf_counter()
    out = fn()
    print(f"  setup: {label} ({time.perf_counter() - start:.1f} s)", file=sys.stderr, flush=True)
    return out


# ----------------------------------------------------------------------------- orchestrators


def importable(python: str, module: str) -> bool:
    """Whether ``python`` can import ``module`` (an orchestrator the dev venv lacks)."""
    return subprocess.run([python, "-c", f"import {module}"], capture_output=True).returncode == 0


def child_samples(python: str, child: str, root: Path, runs: int,
                  env: dict[str, str]) -> list[dict[str, float]]:  # fmt: skip
    """Run the script ``child`` (``python -c child root``) ``runs`` times after one warm-up, a
    fresh process each, and collect the JSON object each prints last (its own timing:
    the orchestrator's import is outside the clock, as in a long-lived parser process)."""
    env = dict(env, RUNTIME__DLTHUB_TELEMETRY="false")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    samples = []
    for i in range(runs + 1):
        out = subprocess.run([python, "-c", child, str(root)], env=env, capture_output=True,
                             text=True, check=True, timeout=600)  # fmt: skip
        if i:  # the first one warms the file cache, the scan cache and bytecode
            samples.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return samples


def print_verdict(title: str, samples: Sequence[dict[str, float]], target_s: float) -> None:
    """``title``, then the median and min of the samples' ``seconds`` against ``target_s``."""
    seconds = [s["seconds"] for s in samples]
    med = statistics.median(seconds)
    verdict = "PASS" if med <= target_s else "FAIL"
    print(title)
    print(f"median {med:.3f} s  min {min(seconds):.3f} s  target <= {target_s} s  {verdict}")
    print(f"note: {machine_note()}")


def many_source_project(work: Path, name: str, n: int, source_text: str,
                        extra: Callable[[int], str] = lambda i: "") -> Path:  # fmt: skip
    """A project of ``n`` scheduled DuckDB sources ``src_000``… from ``source_text`` (formatted
    with ``name``), ``extra(i)`` appended to source ``i``'s ``dlt_ops`` table; the DAG or
    Definitions factories read it with Phase 1 only, so no ledger is needed."""
    root = init_project(OURS, work, bench_env(work), name=name)
    shutil.rmtree(root / "my_pipeline")
    (root / "my_pipeline" / "source").mkdir(parents=True)
    (root / ".dlt" / "config.toml").write_text(
        '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "bench"\n'
    )
    for i in range(n):
        source = f"src_{i:03d}"
        add_source(root, source, source_text.format(name=source), dataset="bench", extra=extra(i))
    return root
