"""Apache Airflow for tests, in its own cached virtualenv (the project's stays light).

Airflow is the ``airflow`` extra of dltops-core, never part of the default environment. Tests
that run DAGs build (once) a virtualenv with Airflow and this workspace's packages installed
editable, pinned to the versions of the running environment, under the cache directory
(``$DLTOPS_CACHE_DIR``, else ``$XDG_CACHE_HOME/dltops``, else ``~/.cache/dltops``), keyed by
the Airflow version and the workspace path, with its packages' bytecode compiled. Creation
holds an exclusive lock and the venv is ready only once its marker is written.
:class:`AirflowHome` migrates a throwaway metadata database (SQLite) and runs Python scripts
in that venv.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

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
