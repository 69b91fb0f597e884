"""A real Airflow deployment (issue 38): ``airflow standalone`` (scheduler, dag-processor,
api-server, LocalExecutor on a SQLite metadata DB) runs a 4-chunk backfill DAG from
``build_backfill_dag``. Measures, from the api-server's access log, the Airflow Variable calls
the chunk tasks make (target 0: dlt's Airflow provider is off), and compares a chunk task's
wall time (Airflow's task-instance duration) to the same chunk run by ``dlt-ops pipeline
backfill`` in a process of its own (target <= 1.2x).

Not part of the test suite (it takes minutes):
``.venv/bin/python bench/bench_airflow_deployment.py``.
Needs the cached Airflow venv (``dlt_ops.testing.airflow.ensure_airflow_venv``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"

[sources.feed.dlt_ops]
schedule = "@manual"
"""

SOURCE = """
from datetime import datetime, timedelta, timezone

import dlt

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


@dlt.resource(name="events", primary_key="id", write_disposition="merge")
def events(updated=dlt.sources.incremental("ts", initial_value=T0)):
    for i in range(4 * 24 * 60):  # one row a minute over four days
        ts = T0 + timedelta(minutes=i)
        if updated.start_value <= ts and (updated.end_value is None or ts < updated.end_value):
            yield {"id": i, "ts": ts, "payload": "x" * 64}


@dlt.source(name="feed")
def feed_source():
    return events
"""

DAG_FILE = """
from dlt_ops.airflow import build_backfill_dag

dag = build_backfill_dag({root!r}, "feed", from_="2026-01-01T00:00:00Z",
                         to="2026-01-05T00:00:00Z", chunk="1d", dag_id="bf_deploy",
                         max_active_tis_per_dag=1)
"""

DURATIONS = """
import json
from airflow.models import TaskInstance
from airflow.utils.session import create_session

with create_session() as s:
    tis = s.query(TaskInstance).filter(TaskInstance.dag_id == "bf_deploy").all()
    print(json.dumps([[t.task_id, t.map_index, t.state, t.duration] for t in tis]))
"""


CLI = "import sys; sys.argv = ['dlt-ops', *sys.argv[1:]]; from dlt_ops.cli import main; main()"


def _project(root: Path) -> None:
    (root / ".dlt").mkdir(parents=True)
    (root / ".dlt" / "config.toml").write_text(CONFIG)
    (root / "feed_pipeline" / "source").mkdir(parents=True)
    (root / "feed_pipeline" / "source" / "feed.py").write_text(SOURCE)


def _json_line(text: str) -> list:
    """The JSON list in a CLI's output (Airflow may print warnings around it)."""
    line = next((ln for ln in text.splitlines() if ln.startswith("[")), "[]")
    return list(json.loads(line))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    from dlt_ops.testing.airflow import ensure_airflow_venv

    venv = ensure_airflow_venv()
    work = Path(tempfile.mkdtemp(prefix="af-deploy-"))
    home, dags, proj, ref = work / "home", work / "dags", work / "proj", work / "ref"
    for d in (home, dags):
        d.mkdir()
    _project(proj)
    _project(ref)
    (dags / "bf.py").write_text(DAG_FILE.format(root=str(proj)))
    port = _free_port()
    env = {**os.environ, "AIRFLOW_HOME": str(home), "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
           "AIRFLOW__CORE__DAGS_FOLDER": str(dags), "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
           "AIRFLOW__API__PORT": str(port),
           "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://localhost:{port}/execution/",
           "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
           "RUNTIME__DLTHUB_TELEMETRY": "false",
           "PATH": f"{venv / 'bin'}:{os.environ.get('PATH', '')}"}  # standalone spawns `airflow`
    airflow = str(venv / "bin" / "airflow")
    subprocess.run([airflow, "db", "migrate"], env=env, check=True, capture_output=True)
    log_path = work / "standalone.log"
    with log_path.open("w") as log:
        server = subprocess.Popen([airflow, "standalone"], env=env, stdout=log,
                                  stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while True:  # the dag-processor has parsed the file
            got = subprocess.run([airflow, "dags", "list", "-o", "json"], env=env,
                                 capture_output=True, text=True)  # fmt: skip
            if got.returncode == 0 and "bf_deploy" in got.stdout:
                break
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit(f"DAG never parsed:\n{log_path.read_text()[-4000:]}")
            time.sleep(2)
        subprocess.run([airflow, "dags", "unpause", "bf_deploy"], env=env, check=True,
                       capture_output=True)  # fmt: skip
        subprocess.run([airflow, "dags", "trigger", "bf_deploy"], env=env, check=True,
                       capture_output=True)  # fmt: skip
        state = ""
        while state not in ("success", "failed"):
            if time.monotonic() > deadline + 600 or server.poll() is not None:
                raise SystemExit(f"DAG run never ended:\n{log_path.read_text()[-4000:]}")
            time.sleep(3)
            runs = subprocess.run([airflow, "dags", "list-runs", "bf_deploy", "-o", "json"],
                                  env=env, capture_output=True, text=True)  # fmt: skip
            found = _json_line(runs.stdout) if runs.returncode == 0 else []
            state = found[0]["state"] if found else ""
        tis = json.loads(subprocess.run([str(venv / "bin" / "python"), "-c", DURATIONS],
                                        env=env, capture_output=True, text=True,
                                        check=True).stdout.strip().splitlines()[-1])  # fmt: skip
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
    text = log_path.read_text()
    variable_calls = len(re.findall(r"/execution/variables/", text))
    chunks = sorted(d for t, _, s, d in tis if t == "run_chunk" and s == "success")
    print(json.dumps({"dag_run": state, "tasks": tis, "variable_calls_in_api_log": variable_calls}),
          file=sys.stderr)  # fmt: skip
    # the same chunk by the CLI, one process per chunk, as a fresh project
    cli = [sys.executable, "-c", CLI, "pipeline", "backfill", "feed", "--chunk",
           "1d", "-y"]  # fmt: skip
    walls = []
    quiet = {**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false"}
    for day in range(1, 5):
        began = time.monotonic()
        subprocess.run([*cli, "--from", f"2026-01-0{day}T00:00:00Z", "--to",
                        f"2026-01-0{day + 1}T00:00:00Z"], cwd=ref, check=True,
                       capture_output=True, env=quiet)  # fmt: skip
        walls.append(time.monotonic() - began)
    task_med, cli_med = chunks[len(chunks) // 2], sorted(walls)[len(walls) // 2]
    print(json.dumps({"dag_run": state, "chunk_tasks": len(chunks),
                      "variable_calls_in_api_log": variable_calls,
                      "chunk_task_s": [round(c, 2) for c in chunks],
                      "cli_chunk_s": [round(w, 2) for w in walls],
                      "ratio_median": round(task_med / cli_med, 2)}, indent=2))  # fmt: skip
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
