"""Apache Airflow for tests, in its own cached virtualenv (the project's stays light).

Airflow is the ``airflow`` extra of dltops-core, never part of the default environment. Tests
that run DAGs build (once) a virtualenv with Airflow and this workspace's packages installed
editable, pinned to the versions of the running environment, under the cache directory
(``$DLTOPS_CACHE_DIR``, else ``$XDG_CACHE_HOME/dltops``, else ``~/.cache/dltops``), keyed by
the Airflow version and the workspace path, with its packages' bytecode compiled. Creation
holds an exclusive lock and the venv is ready only once its marker is written.
:class:`AirflowHome` migrates a throwaway metadata database (SQLite) and runs Python scripts
in that venv; :class:`AirflowDeployment` runs a whole deployment (``airflow standalone``)
from it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dlt_ops.testing._tool_venv import (
    WORKSPACE_PACKAGES,
    ensure_tool_venv,
    run_step,
    tool_venv_dir,
    workspace_root,
)

AIRFLOW_VERSION = "3.3.2"
#: The workspace packages a DAG test needs (installed editable).
PACKAGES = WORKSPACE_PACKAGES
__all__ = [
    "AirflowDeployment",
    "AirflowHome",
    "AirflowUnavailableError",
    "cache_dir",
    "ensure_airflow_venv",
    "workspace_root",
]


class AirflowUnavailableError(RuntimeError):
    """Airflow could not be installed or its database migrated (the message says which)."""


def cache_dir() -> Path:
    """Where the Airflow virtualenv lives."""
    return tool_venv_dir(f"airflow-{AIRFLOW_VERSION}")


def ensure_airflow_venv() -> Path:
    """The virtualenv's directory, built on first use (raises :class:`AirflowUnavailableError`)."""
    requirement = f"apache-airflow=={AIRFLOW_VERSION}"
    # compiled bytecode: each Airflow task is a fresh process that imports dlt (~1 s more
    # without it where PYTHONDONTWRITEBYTECODE is set)
    return ensure_tool_venv(cache_dir(), requirement, AirflowUnavailableError, packages=PACKAGES,
                            compile_bytecode=True)  # fmt: skip


@dataclass
class AirflowHome:
    """A throwaway ``AIRFLOW_HOME`` with a migrated SQLite metadata database."""

    venv: Path
    home: Path

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return {
            **os.environ,
            "AIRFLOW_HOME": str(self.home),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
            "RUNTIME__DLTHUB_TELEMETRY": "false",
            **(extra or {}),
        }

    @classmethod
    def create(cls, home: Path) -> AirflowHome:
        venv = ensure_airflow_venv()
        home.mkdir(parents=True, exist_ok=True)
        made = cls(venv, home)
        run_step([str(venv / "bin" / "airflow"), "db", "migrate"], AirflowUnavailableError,
                 env=made.env(), timeout=600)  # fmt: skip
        return made

    def run_dag_file(self, dags_folder: Path, script: str, *args: str,
                     env: dict[str, str] | None = None,
                     timeout: float = 600) -> subprocess.CompletedProcess[str]:  # fmt: skip
        """Write ``script`` as the only DAG file of ``dags_folder`` and run it there, in the
        Airflow venv (``dag.test()`` finds its DAG by parsing the DAG folder)."""
        dags_folder.mkdir(parents=True, exist_ok=True)
        path = dags_folder / "dlt_ops_dags.py"
        path.write_text(script, encoding="utf-8")
        extra = {"AIRFLOW__CORE__DAGS_FOLDER": str(dags_folder), **(env or {})}
        return subprocess.run(
            [self.python, str(path), *args], env=self.env(extra), capture_output=True,
            text=True, timeout=timeout, cwd=str(dags_folder),
        )  # fmt: skip


def _started(pid: int) -> str | None:
    """The process's start time (``/proc/<pid>/stat`` field 22), to tell a reused pid."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _descendants(pid: int) -> list[tuple[int, str]]:
    """Every live descendant of ``pid`` with its start time (Linux:
    ``/proc/<pid>/task/*/children``)."""
    found: list[tuple[int, str]] = []
    todo = [pid]
    while todo:
        for children in Path(f"/proc/{todo.pop()}/task").glob("*/children"):
            try:
                kids = [int(k) for k in children.read_text().split()]
            except OSError:  # gone meanwhile
                continue
            found += [(k, t) for k in kids if (t := _started(k)) is not None]
            todo += kids
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class AirflowDeployment:
    """A real deployment: ``airflow standalone`` (scheduler, dag-processor, api-server and
    triggerer; LocalExecutor on a SQLite metadata DB) in a throwaway ``AIRFLOW_HOME`` under
    ``work``, with its DAG folder at ``work/dags``. Read through its metadata database
    (read-only, so no ``airflow`` CLI process competes with the tasks) and its REST API
    (every user an admin: a token needs no password). ``env`` is the environment of every
    component and so of every task."""

    def __init__(self, venv: Path, work: Path, env: dict[str, str] | None = None) -> None:
        self.venv = venv
        self.home, self.dags = work / "home", work / "dags"
        self.home.mkdir(parents=True, exist_ok=True)
        self.dags.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        base = dict(os.environ if env is None else env)
        self.env = {**base, "AIRFLOW_HOME": str(self.home),
                    "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                    "AIRFLOW__CORE__UNIT_TEST_MODE": "False",
                    "AIRFLOW__CORE__DAGS_FOLDER": str(self.dags),
                    "AIRFLOW__CORE__EXECUTOR": "LocalExecutor",
                    "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
                    "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",
                    "AIRFLOW__API__PORT": str(self.port),
                    "AIRFLOW__CORE__EXECUTION_API_SERVER_URL":
                        f"http://localhost:{self.port}/execution/",
                    "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
                    "RUNTIME__DLTHUB_TELEMETRY": "false",
                    "PATH": f"{venv / 'bin'}:{base.get('PATH', '')}"}  # fmt: skip
        self.airflow = str(venv / "bin" / "airflow")
        self.log_path = work / "standalone.log"
        self.server: subprocess.Popen[bytes] | None = None
        self._token: str | None = None

    # -- life cycle ------------------------------------------------------------------------

    def start(self, timeout: float = 300) -> None:
        """Migrate the database, start every component, wait until the api-server answers
        (raises :class:`AirflowUnavailableError` when a step fails or time runs out)."""
        run_step([self.airflow, "db", "migrate"], AirflowUnavailableError, env=self.env,
                 timeout=timeout)  # fmt: skip
        with self.log_path.open("w") as log:
            self.server = subprocess.Popen([self.airflow, "standalone"], env=self.env,
                                           stdout=log, stderr=subprocess.STDOUT,
                                           start_new_session=True)  # fmt: skip
        deadline = time.monotonic() + timeout
        while True:
            try:
                health = self.api("GET", "/api/v2/monitor/health")
                if health.get("scheduler", {}).get("status") == "healthy":
                    return
            except (OSError, ValueError):  # not listening yet, or no token yet
                pass
            self.alive("starting")
            if time.monotonic() > deadline:
                raise AirflowUnavailableError(f"airflow standalone not healthy in {timeout} s:"
                                              f"\n{self.log_tail()}")  # fmt: skip
            time.sleep(1)

    def stop(self) -> None:
        """SIGTERM every component (their process group), SIGKILL what is left after 60 s,
        then every task process still alive: Airflow starts each task in a session of its
        own, outside the group (a task a failed test left blocked would outlive it)."""
        if self.server is None or self.server.poll() is not None:
            return
        tasks = _descendants(self.server.pid)
        os.killpg(self.server.pid, signal.SIGTERM)
        try:
            self.server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(self.server.pid, signal.SIGKILL)
            self.server.wait(timeout=30)
        for pid, started in tasks:
            if _started(pid) == started:  # still that process, not a reused pid
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def __enter__(self) -> AirflowDeployment:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def log_tail(self, chars: int = 4000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:] if self.log_path.exists() else ""

    def alive(self, what: str) -> None:
        """Raise :class:`AirflowUnavailableError` (with the log's tail) if it exited."""
        if self.server is None or self.server.poll() is not None:
            raise AirflowUnavailableError(f"airflow standalone exited ({what}):\n"
                                          f"{self.log_tail()}")  # fmt: skip

    # -- reading its state -----------------------------------------------------------------

    def query(self, sql: str, *params: object) -> list[tuple[Any, ...]]:
        """Rows from the metadata DB (read-only); none while it is missing, being migrated
        or busy."""
        db = self.home / "airflow.db"
        if not db.exists():
            return []
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as conn:
                return conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError:
            return []

    def api(self, method: str, path: str, body: object = None) -> Any:
        """One REST call (JSON in, JSON out) with an admin token."""
        base = f"http://127.0.0.1:{self.port}"
        if self._token is None:
            with urllib.request.urlopen(f"{base}/auth/token", timeout=30) as got:
                self._token = json.loads(got.read())["access_token"]
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {self._token}", "Content-Type": "application/json"}
        request = urllib.request.Request(f"{base}{path}", data=data, method=method,
                                         headers=headers)  # fmt: skip
        with urllib.request.urlopen(request, timeout=30) as got:
            return json.loads(got.read() or b"null")

    def wait_parsed(self, dag_ids: list[str], timeout: float = 600) -> None:
        """Until the dag-processor has serialized every DAG in ``dag_ids``."""
        deadline = time.monotonic() + timeout
        while True:
            found = {str(r[0]) for r in self.query("SELECT dag_id FROM serialized_dag")}
            if set(dag_ids) <= found:
                return
            self.alive("waiting for the DAG files to be parsed")
            if time.monotonic() > deadline:
                missing = sorted(set(dag_ids) - found)
                raise AssertionError(f"DAGs never parsed in {timeout} s: {missing}\n"
                                     f"{self.log_tail()}")  # fmt: skip
            time.sleep(1)

    def trigger(self, dag_id: str, conf: dict[str, Any] | None = None) -> str:
        """Trigger a manual DAG run now; its run id."""
        body = {"logical_date": None, "conf": conf or {}}
        return str(self.api("POST", f"/api/v2/dags/{dag_id}/dagRuns", body)["dag_run_id"])

    def run_state(self, dag_id: str, run_id: str) -> str | None:
        rows = self.query("SELECT state FROM dag_run WHERE dag_id = ? AND run_id = ?",
                          dag_id, run_id)  # fmt: skip
        return str(rows[0][0]) if rows else None

    def wait_run(self, dag_id: str, run_id: str, timeout: float = 600) -> str:
        """Until the DAG run ends; its state (``success`` or ``failed``)."""
        deadline = time.monotonic() + timeout
        while (state := self.run_state(dag_id, run_id)) not in ("success", "failed"):
            self.alive(f"running {dag_id}")
            if time.monotonic() > deadline:
                raise AssertionError(f"DAG run {dag_id}/{run_id} still {state} after "
                                     f"{timeout} s\n{self.log_tail()}")  # fmt: skip
            time.sleep(0.5)
        return str(state)

    def task_instances(self, dag_id: str, run_id: str | None = None) -> list[dict[str, Any]]:
        """The task instances of ``dag_id`` (of one run): task, map index, state, and when
        they were scheduled, queued, started and ended (ISO text, UTC), duration (s)."""
        cols = ("run_id", "task_id", "map_index", "state", "scheduled_dttm", "queued_dttm",
                "start_date", "end_date", "duration", "pool")  # fmt: skip
        where, params = "dag_id = ?", [dag_id]
        if run_id is not None:
            where, params = where + " AND run_id = ?", [*params, run_id]
        rows = self.query(f"SELECT {', '.join(cols)} FROM task_instance WHERE {where}", *params)
        return [dict(zip(cols, row, strict=True)) for row in rows]

    def variable_calls(self) -> int:
        """Variable look-ups the tasks made (counted in the api-server's access log)."""
        return len(re.findall(r"/execution/variables/", self.log_path.read_text()))
