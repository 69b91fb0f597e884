"""A real Airflow deployment (issue 38): ``airflow standalone`` (scheduler, dag-processor,
api-server, LocalExecutor on a SQLite metadata DB) runs one-chunk backfill DAGs from
``build_backfill_dag``. Measures, from the api-server's access log, the Airflow Variable calls
the tasks make (target 0: dlt's Airflow provider is off), and compares a chunk task's wall
time to the same-sized chunk run by ``dlt-ops pipeline backfill`` in a process of its own
(target <= 1.2x), at two chunk sizes:

* ``small``: 1,440 rows a day (one a minute), ~1 s of dlt work a chunk;
* ``large``: 150,000 rows a day in pages of 5,000, ~12-15 s of dlt work a chunk (the issue's
  deployment had 16-17 s chunk tasks).

What each side includes:

* task: Airflow's task-instance duration (``end_date - start_date`` in the metadata DB) of the
  ``run_chunk`` task: from the supervisor's start call, the task process's parse of its DAG
  file, the dlt-ops chunk (check the source, read the plan, claim, run, complete), the XCom,
  to the state update. Not the scheduler's queueing before it, nor the ``seed``/``check``
  tasks.
* CLI: the wall time of ``dlt-ops pipeline backfill SOURCE --from D --to D+1 --chunk 1d -y``
  in a fresh process (interpreter start, CLI import, check, seed, claim, run, summary).

Fairness: both sides run on the same project and the same DuckDB file, alternately (task on
day ``2k+1``, CLI on day ``2k+2``; which goes first alternates per pair), after an untimed CLI
warm-up chunk that creates the database and tables; both interpreters have compiled bytecode
(this machine sets ``PYTHONDONTWRITEBYTECODE``: without ``compileall`` every Airflow task
process recompiles dlt, ~1 s) and the same dlt and dlt-ops versions (the Airflow venv is
pinned to the workspace's). The CLI runs in the workspace venv (no Airflow installed, as a CLI
user has it). The deployment is ``dlt_ops.testing.airflow.AirflowDeployment`` (the one the
test suite runs); the bench triggers runs through its REST API and polls its SQLite database
directly (no ``airflow`` CLI process runs while a task does). Reports medians.

Headline: the ratio of the medians (task / CLI); also the median of the per-pair ratios, which
a load that drifts over the minutes of the run moves less.

Not part of the test suite (it takes ~10 min):
``.venv/bin/python bench/bench_airflow_deployment.py [--pairs-small 8] [--pairs-large 5]``.
Needs the cached Airflow venv (``dlt_ops.testing.airflow.ensure_airflow_venv``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import OURS, Install, bench_env, compile_bytecode  # noqa: E402

from dlt_ops.testing.airflow import AirflowDeployment, ensure_airflow_venv  # noqa: E402

CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"

[sources.small.dlt_ops]
schedule = "@manual"

[sources.large.dlt_ops]
schedule = "@manual"
"""

SOURCE = """
from datetime import datetime, timedelta, timezone

import dlt

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
PER_DAY = {per_day}
STEP = timedelta(days=1) / PER_DAY
PAGE = {page}


@dlt.resource(name="events", primary_key="id", write_disposition="merge")
def events(updated=dlt.sources.incremental("ts", initial_value=T0)):
    lo, hi = updated.start_value, updated.end_value
    first = max(0, int((lo - T0) / STEP))
    last = int((hi - T0) / STEP) if hi is not None else 40 * PER_DAY
    for start in range(first, last, PAGE):
        page = []
        for i in range(start, min(start + PAGE, last)):
            ts = T0 + i * STEP
            if lo <= ts and (hi is None or ts < hi):
                page.append({{"id": i, "ts": ts, "payload": "x" * 64}})
        yield page


@dlt.source(name="{name}")
def {name}_source():
    return events
"""

SIZES = {"small": (1_440, 1), "large": (150_000, 5_000)}  # rows a day, rows a page

DAG_FILE = """
from dlt_ops.airflow import build_backfill_dag

dag = build_backfill_dag({root!r}, {source!r}, from_={start!r}, to={end!r}, chunk="1d",
                         dag_id={dag_id!r})
"""

T0 = date(2026, 1, 1)
CLI = "import sys; sys.argv = ['dlt-ops', *sys.argv[1:]]; from dlt_ops.cli import main; main()"


def _day(n: int) -> str:
    return f"{T0 + timedelta(days=n)}T00:00:00Z"


def _project(root: Path) -> None:
    (root / ".dlt").mkdir(parents=True)
    (root / ".dlt" / "config.toml").write_text(CONFIG)
    for name, (per_day, page) in SIZES.items():
        folder = root / f"{name}_pipeline" / "source"
        folder.mkdir(parents=True)
        (folder / f"{name}.py").write_text(SOURCE.format(name=name, per_day=per_day, page=page))


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _run(deployment: AirflowDeployment, dag_id: str) -> dict[str, object]:
    """Trigger ``dag_id``, wait for its run to end; its state and task durations."""
    run_id = deployment.trigger(dag_id)
    state = deployment.wait_run(dag_id, run_id, timeout=900)
    tasks: dict[str, tuple[object, object]] = {}
    for ti in deployment.task_instances(dag_id, run_id):
        index = int(ti["map_index"])
        name = f"{ti['task_id']}[{index}]" if index >= 0 else str(ti["task_id"])
        tasks[name] = (ti["state"], ti["duration"])
    return {"state": state, "tasks": tasks}


def _cli(cwd: Path, source: str, day: int, env: dict[str, str]) -> float:
    began = time.monotonic()
    subprocess.run([OURS.python, "-c", CLI, "pipeline", "backfill", source, "--chunk", "1d", "-y",
                    "--from", _day(day), "--to", _day(day + 1)], cwd=cwd, check=True,
                   capture_output=True, env=env)  # fmt: skip
    return time.monotonic() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs-small", type=int, default=8)
    parser.add_argument("--pairs-large", type=int, default=5)
    parser.add_argument("--airflow-venv", type=Path, default=None,
                        help="an Airflow venv with this workspace installed (default: the "
                        "cached one); with PYTHONPATH set to other dlt-ops sources, both "
                        "sides run those")  # fmt: skip
    args = parser.parse_args()
    venv = args.airflow_venv or ensure_airflow_venv()
    work = Path(tempfile.mkdtemp(prefix="af-deploy-"))
    proj = work / "proj"
    _project(proj)
    env = bench_env(work)  # bytecode on, telemetry off, dlt's data dir in the temp dir
    compile_bytecode(OURS)
    compile_bytecode(Install("airflow", venv))
    pairs = {n: k for n, k in (("small", args.pairs_small), ("large", args.pairs_large)) if k}
    dag_ids = {name: [f"bf_{name}_{k}" for k in range(n)] for name, n in pairs.items()}
    deployment = AirflowDeployment(venv, work, env)
    for name, ids in dag_ids.items():
        for k, dag_id in enumerate(ids):  # the task's chunk: day 2k+1; the CLI's: day 2k+2
            text = DAG_FILE.format(root=str(proj), source=name, start=_day(2 * k + 1),
                                   end=_day(2 * k + 2), dag_id=dag_id)  # fmt: skip
            (deployment.dags / f"{dag_id}.py").write_text(text)
    load_before = _load()
    results: dict[str, dict[str, object]] = {}
    runs: dict[str, list[dict[str, object]]] = {}
    try:
        deployment.start()
        deployment.wait_parsed([i for ids in dag_ids.values() for i in ids])
        for name, ids in dag_ids.items():
            _cli(proj, name, 0, env)  # warm-up, untimed: creates the database and tables
            tasks, clis = [], []
            for k, dag_id in enumerate(ids):
                order = ("task", "cli") if k % 2 == 0 else ("cli", "task")
                for side in order:
                    if side == "cli":
                        clis.append(_cli(proj, name, 2 * k + 2, env))
                        continue
                    ran = _run(deployment, dag_id)
                    runs.setdefault(name, []).append(ran)
                    state, took = ran["tasks"]["run_chunk[0]"]  # type: ignore[index]
                    if ran["state"] != "success" or state != "success":
                        raise SystemExit(f"{dag_id}: {json.dumps(ran)}\n"
                                         f"{deployment.log_path.read_text()[-4000:]}")  # fmt: skip
                    tasks.append(float(took))
            task_med, cli_med = statistics.median(tasks), statistics.median(clis)
            # each pair ran back to back, so it shares the machine's load of the moment
            paired = statistics.median(t / c for t, c in zip(tasks, clis, strict=True))
            results[name] = {"rows_per_chunk": SIZES[name][0], "pairs": len(ids),
                             "task_s": [round(t, 2) for t in tasks],
                             "cli_s": [round(c, 2) for c in clis],
                             "task_median_s": round(task_med, 2),
                             "cli_median_s": round(cli_med, 2),
                             "ratio_median": round(task_med / cli_med, 2),
                             "pair_ratio_median": round(paired, 2),
                             "met": task_med / cli_med <= 1.2}  # fmt: skip
    finally:
        deployment.stop()
    print(json.dumps({"runs": runs}), file=sys.stderr)
    print(json.dumps({"variable_calls_in_api_log": deployment.variable_calls(),
                      "load_before": load_before, "load_after": _load(), **results},
                     indent=2))  # fmt: skip
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
