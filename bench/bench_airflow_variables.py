"""Benchmark: Airflow Variable look-ups per backfill chunk task, dlt's Airflow provider off
(the factories' default) and kept (``dlt_airflow_secrets=True``). Target: 0 when off.

dlt's own Airflow config provider asks Airflow for a Variable for every config key it
resolves; in Airflow 3 each ask is a call through the task supervisor to the api-server. This
builds a ``build_backfill_dag`` over ``--days`` daily chunks of a DuckDB project, runs it with
``dag.test()`` (in-process, SQLite metadata DB) once per setting, and counts the
``airflow.models.Variable.get`` calls (what dlt's provider calls) made inside each task, per
chunk task, plus the run's wall time. ``dag.test()`` serves a Variable from the local database
without the HTTP hop of a real deployment, so the time difference here understates a
deployment's; the count is the same. The airflow venv is the test suite's cached one
(``dlt_ops.testing.airflow``) with ``--install``, else ``--python`` (skipped without Airflow).

Run: .venv/bin/python bench/bench_airflow_variables.py [--install] [--python PY] [--days 4]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _timing import importable, machine_note

TARGET_OFF = 0

SOURCE = '''"""Benchmark source: one row per day of the requested window."""

from datetime import datetime, timedelta, timezone

import dlt

START = datetime(2026, 1, 1, tzinfo=timezone.utc)


@dlt.resource(primary_key="id", write_disposition="merge")
def events(ts=dlt.sources.incremental("ts", initial_value=START)):
    lo, hi = ts.start_value, ts.end_value
    day = lo
    while day < (hi or lo + timedelta(days=1)):
        yield {"id": day.toordinal(), "ts": day}
        day += timedelta(days=1)


@dlt.source(name="daily")
def daily_source():
    return events
'''

DAG_FILE = """
import json, os, sys, time
from airflow.models.variable import Variable

CALLS = {}
if not getattr(Variable, "_dltops_counted", False):
    _get = Variable.get.__func__

    def _counted(cls, key, *args, **kwargs):
        try:
            from airflow.sdk import get_current_context

            task = get_current_context()["ti"].task_id
        except Exception:
            task = "(outside a task)"
        CALLS.setdefault(task, []).append(key)
        return _get(cls, key, *args, **kwargs)

    Variable.get = classmethod(_counted)
    Variable._dltops_counted = True

from dlt_ops.airflow import build_backfill_dag

days = int(os.environ["BENCH_DAYS"])
keep = os.environ["BENCH_KEEP"] == "1"
dag = build_backfill_dag(os.environ["BENCH_PROJECT"], "daily", from_="2026-01-01T00:00:00Z",
                         to=f"2026-01-{1 + days:02d}T00:00:00Z", chunk="1d",
                         dag_id="bench_keep" if keep else "bench_off",
                         dlt_airflow_secrets=keep)

if __name__ == "__main__":
    start = time.perf_counter()
    run = dag.test()
    seconds = time.perf_counter() - start
    chunk = CALLS.get("run_chunk", [])
    print(json.dumps({"state": str(run.state), "seconds": seconds, "chunk_calls": len(chunk),
                      "distinct_keys": len(set(k for ks in CALLS.values() for k in ks)),
                      "all_calls": sum(len(v) for v in CALLS.values())}))
"""


def airflow_python() -> str:
    """The cached Airflow test venv's interpreter (built on first use)."""
    from dlt_ops.testing.airflow import ensure_airflow_venv

    return str(ensure_airflow_venv() / "bin" / "python")


def project(root: Path) -> Path:
    """A one-source DuckDB project whose source serves exactly the requested window."""
    (root / ".dlt").mkdir(parents=True)
    (root / ".dlt" / "config.toml").write_text(
        '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "bench"\n\n'
        '[sources.daily.dlt_ops]\nschedule = "@daily"\n'
    )
    (root / "pipe" / "source").mkdir(parents=True)
    (root / "pipe" / "source" / "daily.py").write_text(SOURCE)
    return root


def measure(python: str, work: Path, days: int) -> dict[str, dict[str, float]]:
    """One ``dag.test()`` per setting, each on a fresh project (nothing skipped as done)."""
    home = work / "airflow-home"
    home.mkdir()
    env = dict(os.environ, AIRFLOW_HOME=str(home), AIRFLOW__CORE__LOAD_EXAMPLES="False",
               AIRFLOW__CORE__UNIT_TEST_MODE="False", RUNTIME__DLTHUB_TELEMETRY="false",
               BENCH_DAYS=str(days))  # fmt: skip
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    airflow = str(Path(python).parent / "airflow")
    subprocess.run([airflow, "db", "migrate"], env=env, check=True, capture_output=True,
                   timeout=600)  # fmt: skip
    out: dict[str, dict[str, float]] = {}
    for label, keep in (("kept", "1"), ("off", "0")):
        dags = work / f"dags-{label}"
        dags.mkdir()
        (dags / "bench_dag.py").write_text(DAG_FILE)
        root = project(work / f"project-{label}")
        child = dict(env, BENCH_KEEP=keep, BENCH_PROJECT=str(root),
                     AIRFLOW__CORE__DAGS_FOLDER=str(dags))  # fmt: skip
        done = subprocess.run([python, str(dags / "bench_dag.py")], env=child, cwd=str(dags),
                              capture_output=True, text=True, timeout=1800)  # fmt: skip
        lines = [ln for ln in done.stdout.splitlines() if ln.startswith('{"state"')]
        if done.returncode != 0 or not lines:
            raise SystemExit(f"the {label} run failed:\n{(done.stdout + done.stderr)[-3000:]}")
        out[label] = json.loads(lines[-1])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--install", action="store_true", help="use the cached Airflow venv")
    parser.add_argument("--python", default=sys.executable, help="an interpreter with Airflow")
    parser.add_argument("--days", type=int, default=4, help="chunks of the backfill")
    args = parser.parse_args()
    python = airflow_python() if args.install else args.python
    if not importable(python, "airflow"):
        print(f"skipped: Apache Airflow is not importable by {python} (try --install)")
        return
    with tempfile.TemporaryDirectory(prefix="dltops-bench-airflow-vars-") as tmp:
        figures = measure(python, Path(tmp), args.days)
    print(f"Airflow Variable look-ups per backfill chunk task, {args.days} chunks (dag.test)")
    print(f"{'dlt provider':<14}{'per chunk task':>16}{'distinct keys':>15}{'run s':>9}  state")
    for label, f in figures.items():
        per = f["chunk_calls"] / args.days
        print(f"{label:<14}{per:>16.1f}{f['distinct_keys']:>15.0f}{f['seconds']:>9.1f}"
              f"  {f['state']}")  # fmt: skip
    off = figures["off"]["chunk_calls"] / args.days
    verdict = "PASS" if off <= TARGET_OFF else "FAIL"
    print(f"off: {off:.1f} look-ups per chunk task, target {TARGET_OFF}  {verdict}")
    print(f"note: {machine_note()}")


if __name__ == "__main__":
    main()
