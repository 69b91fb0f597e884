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
user has it). The bench polls Airflow's SQLite database directly (no ``airflow`` CLI process
runs while a task does). Reports medians.

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
import re
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import OURS, Install, bench_env, compile_bytecode  # noqa: E402

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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


class Deployment:
    """``airflow standalone`` in a throwaway home, read through its SQLite metadata DB."""

    def __init__(self, venv: Path, work: Path, env: dict[str, str]) -> None:
        self.home, self.dags = work / "home", work / "dags"
        self.home.mkdir()
        self.dags.mkdir()
        port = _free_port()
        self.env = {**env, "AIRFLOW_HOME": str(self.home),
                    "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                    "AIRFLOW__CORE__DAGS_FOLDER": str(self.dags),
                    "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
                    "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
                    "AIRFLOW__API__PORT": str(port),
                    "AIRFLOW__CORE__EXECUTION_API_SERVER_URL":
                        f"http://localhost:{port}/execution/",
                    "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
                    "PATH": f"{venv / 'bin'}:{env.get('PATH', '')}"}  # fmt: skip
        self.airflow = str(venv / "bin" / "airflow")
        self.log_path = work / "standalone.log"
        self.server: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        subprocess.run([self.airflow, "db", "migrate"], env=self.env, check=True,
                       capture_output=True)  # fmt: skip
        with self.log_path.open("w") as log:
            self.server = subprocess.Popen([self.airflow, "standalone"], env=self.env,
                                           stdout=log, stderr=subprocess.STDOUT,
                                           start_new_session=True)  # fmt: skip

    def stop(self) -> None:
        if self.server is not None:
            os.killpg(self.server.pid, signal.SIGTERM)
            self.server.wait(timeout=60)

    def _query(self, sql: str, *params: object) -> list[tuple[object, ...]]:
        db = self.home / "airflow.db"
        if not db.exists():
            return []
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
                return conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError:  # a table not migrated yet, or a busy database
            return []

    def _alive(self, what: str) -> None:
        if self.server is None or self.server.poll() is not None:
            raise SystemExit(f"airflow standalone exited ({what}):\n"
                             f"{self.log_path.read_text()[-4000:]}")  # fmt: skip

    def wait_parsed(self, dag_ids: list[str], timeout: float = 600) -> None:
        deadline = time.monotonic() + timeout
        while True:
            found = {str(r[0]) for r in self._query("SELECT dag_id FROM serialized_dag")}
            if set(dag_ids) <= found:
                return
            self._alive("waiting for the DAG files to be parsed")
            if time.monotonic() > deadline:
                raise SystemExit(f"DAGs never parsed: {sorted(set(dag_ids) - found)}")
            time.sleep(2)

    def run(self, dag_id: str, timeout: float = 900) -> dict[str, object]:
        """Trigger ``dag_id``, wait for its run to end; its state and task durations."""
        subprocess.run([self.airflow, "dags", "trigger", dag_id], env=self.env, check=True,
                       capture_output=True)  # fmt: skip
        deadline = time.monotonic() + timeout
        while True:
            found = self._query("SELECT state FROM dag_run WHERE dag_id = ?", dag_id)
            states = [str(r[0]) for r in found]
            if states and states[0] in ("success", "failed"):
                break
            self._alive(f"running {dag_id}")
            if time.monotonic() > deadline:
                raise SystemExit(f"DAG run of {dag_id} never ended")
            time.sleep(1)
        tis = self._query("SELECT task_id, map_index, state, duration FROM task_instance "
                          "WHERE dag_id = ?", dag_id)  # fmt: skip
        return {"state": states[0],
                "tasks": {f"{t}[{m}]" if int(str(m)) >= 0 else str(t): (s, d)
                          for t, m, s, d in tis}}  # fmt: skip

    def variable_calls(self) -> int:
        return len(re.findall(r"/execution/variables/", self.log_path.read_text()))


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
    from dlt_ops.testing.airflow import ensure_airflow_venv

    venv = args.airflow_venv or ensure_airflow_venv()
    work = Path(tempfile.mkdtemp(prefix="af-deploy-"))
    proj = work / "proj"
    _project(proj)
    env = bench_env(work)  # bytecode on, telemetry off, dlt's data dir in the temp dir
    compile_bytecode(OURS)
    compile_bytecode(Install("airflow", venv))
    pairs = {n: k for n, k in (("small", args.pairs_small), ("large", args.pairs_large)) if k}
    dag_ids = {name: [f"bf_{name}_{k}" for k in range(n)] for name, n in pairs.items()}
    deployment = Deployment(venv, work, env)
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
                    ran = deployment.run(dag_id)
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
