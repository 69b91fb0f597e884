"""Benchmark: the Airflow DAG factory over a many-source project (target: <= 1 s for 100).

``dlt_ops.airflow.build_schedule_dags(project)`` is what a DAG file calls each time Airflow's
DAG processor parses it; it reads the project with Phase 1 only (no project code imported).
Each sample is a fresh process that imports Airflow first (a DAG processor has it loaded),
then times importing the factory and building every DAG. Airflow is not a dependency of the
dev venv: ``--install`` puts it, with dltops-core and dltops-duckdb from this checkout, into a
throwaway venv; without it, the given ``--python`` must have Airflow (else: skipped).

Run: .venv/bin/python bench/bench_airflow.py [--install] [--python PY] [--sources 100]
     [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from _timing import REPO, child_samples, importable, many_source_project, print_verdict

TARGET_S = 1.0
AIRFLOW_SPEC = "apache-airflow>=3.0"

SOURCE = '''"""Benchmark source {name}."""

import dlt


@dlt.resource(name="items", primary_key="id", write_disposition="replace")
def items():
    yield [{{"id": 1}}]


@dlt.source(name="{name}")
def {name}_source():
    return items
'''

CHILD = """
import json, sys, time
import airflow  # noqa: F401  (a DAG processor has Airflow loaded before it parses a file)
from airflow.sdk import DAG, task  # noqa: F401
start = time.perf_counter()
from dlt_ops.airflow import build_schedule_dags
dags = build_schedule_dags(sys.argv[1])
seconds = time.perf_counter() - start
tasks = sum(len(d.tasks) for d in dags.values())
print(json.dumps({"seconds": seconds, "dags": len(dags), "tasks": tasks}))
"""


def install_airflow(venv: Path) -> str:
    """A throwaway venv with Airflow and this checkout's core + DuckDB packages; its python."""
    uv = shutil.which("uv")
    base = [uv] if uv else [sys.executable, "-m", "uv"]
    env = dict(os.environ, UV_COMPILE_BYTECODE="1", UV_PYTHON_DOWNLOADS="never")
    subprocess.run([*base, "venv", str(venv), "-p", "3.11", "-q"], check=True, env=env,
                   capture_output=True, timeout=120)  # fmt: skip
    python = str(venv / "bin" / "python")
    packages = REPO / "packages"
    subprocess.run(
        [*base, "pip", "install", "-q", "-p", python, "-e", str(packages / "dltops-core"),
         "-e", str(packages / "dltops-duckdb"), AIRFLOW_SPEC, "sqlglot<30.22"],
        check=True, env=env, capture_output=True, timeout=900,
    )  # fmt: skip
    return python


def project(work: Path, n: int) -> Path:
    """``n`` scheduled sources (no ledger needed: the factory reads the project only)."""
    return many_source_project(work, "airflow", n, SOURCE)


def measure(python: str, root: Path, runs: int, work: Path) -> list[dict[str, float]]:
    """``runs`` fresh processes (after one warm-up): the child's own figures."""
    (work / "airflow-home").mkdir(exist_ok=True)
    env = dict(os.environ, AIRFLOW_HOME=str(work / "airflow-home"),
               AIRFLOW__CORE__LOAD_EXAMPLES="False")  # fmt: skip
    return child_samples(python, CHILD, root, runs, env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--install", action="store_true", help="Airflow into a throwaway venv")
    parser.add_argument("--python", default=sys.executable, help="an interpreter with Airflow")
    parser.add_argument("--sources", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dltops-bench-airflow-") as tmp:
        work = Path(tmp)
        python = install_airflow(work / "venv") if args.install else args.python
        if not importable(python, "airflow"):
            print(f"skipped: Apache Airflow is not importable by {python} (try --install)")
            return
        samples = measure(python, project(work / "p", args.sources), args.runs, work)
    print_verdict(f"Airflow DAG factory, {args.sources} sources ({samples[0]['dags']:.0f} "
                  f"DAG(s), {samples[0]['tasks']:.0f} tasks), median of {args.runs}",
                  samples, TARGET_S)  # fmt: skip


if __name__ == "__main__":
    main()
