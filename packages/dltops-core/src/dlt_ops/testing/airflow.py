"""Apache Airflow for tests, in its own cached virtualenv (the project's stays light).

Airflow is the ``airflow`` extra of dltops-core, never part of the default environment. Tests
that run DAGs build (once) a virtualenv with Airflow and this workspace's packages installed
editable, pinned to the versions of the running environment, under the cache directory
(``$DLTOPS_CACHE_DIR``, else ``$XDG_CACHE_HOME/dltops``, else ``~/.cache/dltops``), keyed by
the Airflow version and the workspace path. Creation holds an exclusive lock and the venv is
ready only once its marker is written. :class:`AirflowHome` migrates a throwaway metadata
database (SQLite) and runs Python scripts in that venv.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from dlt_ops.testing._tool_venv import cache_root, run_step, uv

AIRFLOW_VERSION = "3.3.2"
_READY_MARKER = ".dltops-ready"
#: The workspace packages a DAG test needs (installed editable).
PACKAGES = ("dltops-core", "dltops-duckdb", "dltops-postgres")


class AirflowUnavailableError(RuntimeError):
    """Airflow could not be installed or its database migrated (the message says which)."""


def workspace_root() -> Path:
    """The uv workspace this module lives in (``packages/dltops-core/src/dlt_ops/testing``)."""
    return Path(__file__).resolve().parents[5]


def cache_dir() -> Path:
    """Where the Airflow virtualenv lives."""
    key = hashlib.sha256(str(workspace_root()).encode()).hexdigest()[:10]
    return cache_root() / f"airflow-{AIRFLOW_VERSION}-{key}"


def _run(cmd: list[str], *, env: dict[str, str] | None = None, timeout: float = 900) -> str:
    return run_step(cmd, AirflowUnavailableError, env=env, timeout=timeout)


def _recipe() -> str:
    return f"apache-airflow=={AIRFLOW_VERSION} {' '.join(PACKAGES)} {workspace_root()}\n"


def ensure_airflow_venv() -> Path:
    """The virtualenv's directory, built on first use (raises :class:`AirflowUnavailableError`)."""
    venv = cache_dir()
    marker = venv / _READY_MARKER
    if marker.exists() and marker.read_text() == _recipe():
        return venv
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second process waits here, then finds the marker
        try:
            if marker.exists() and marker.read_text() == _recipe():
                return venv
            shutil.rmtree(venv, ignore_errors=True)
            env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
            _run([*uv(), "venv", "-q", str(venv), "--python", sys.executable], env=env)
            # the running environment's versions, so the DAG runs what the suite tests
            frozen = _run([*uv(), "pip", "freeze", "--python", sys.executable], env=env)
            pins = [line for line in frozen.splitlines()
                    if line and not line.startswith("-e") and " @ " not in line
                    and not line.lower().startswith(("dltops", "dlt-ops"))]  # fmt: skip
            constraints = venv / "constraints.txt"
            constraints.write_text("\n".join(pins) + "\n")
            root = workspace_root()
            editables = [a for p in PACKAGES for a in ("-e", str(root / "packages" / p))]
            _run([*uv(), "pip", "install", "-q", "--python", str(venv / "bin" / "python"),
                  "-c", str(constraints), f"apache-airflow=={AIRFLOW_VERSION}", "psycopg[binary]",
                  *editables], env=env)  # fmt: skip
            marker.write_text(_recipe())
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return venv


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
        _run([str(venv / "bin" / "airflow"), "db", "migrate"], env=made.env(), timeout=600)
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
