"""Dagster for tests, in its own cached virtualenv (the project's stays light).

Dagster is the ``dagster`` extra of dltops-core, never part of the default environment. Tests
that load Definitions or execute jobs build (once) a virtualenv with Dagster and this
workspace's packages installed editable, pinned to the versions of the running environment,
under the cache directory (see :func:`dlt_ops.testing._tool_venv.cache_root`), keyed by the
Dagster version and the workspace path. Creation holds an exclusive lock and the venv is ready
only once its marker is written. :class:`DagsterEnv` runs Python scripts there with a
throwaway ``DAGSTER_HOME``.
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

DAGSTER_VERSION = "1.13.28"
_READY_MARKER = ".dltops-ready"
#: The workspace packages a Dagster test needs (installed editable).
PACKAGES = ("dltops-core", "dltops-duckdb", "dltops-postgres")


class DagsterUnavailableError(RuntimeError):
    """Dagster could not be installed (the message says which step failed)."""


def workspace_root() -> Path:
    """The uv workspace this module lives in (``packages/dltops-core/src/dlt_ops/testing``)."""
    return Path(__file__).resolve().parents[5]


def cache_dir() -> Path:
    """Where the Dagster virtualenv lives."""
    key = hashlib.sha256(str(workspace_root()).encode()).hexdigest()[:10]
    return cache_root() / f"dagster-{DAGSTER_VERSION}-{key}"


def _run(cmd: list[str], *, env: dict[str, str] | None = None, timeout: float = 900) -> str:
    return run_step(cmd, DagsterUnavailableError, env=env, timeout=timeout)


def _recipe() -> str:
    return f"dagster=={DAGSTER_VERSION} {' '.join(PACKAGES)} {workspace_root()}\n"


def ensure_dagster_venv() -> Path:
    """The virtualenv's directory, built on first use (raises :class:`DagsterUnavailableError`)."""
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
            # the running environment's versions, so the jobs run what the suite tests
            frozen = _run([*uv(), "pip", "freeze", "--python", sys.executable], env=env)
            pins = [line for line in frozen.splitlines()
                    if line and not line.startswith("-e") and " @ " not in line
                    and not line.lower().startswith(("dltops", "dlt-ops"))]  # fmt: skip
            constraints = venv / "constraints.txt"
            constraints.write_text("\n".join(pins) + "\n")
            root = workspace_root()
            editables = [a for p in PACKAGES for a in ("-e", str(root / "packages" / p))]
            _run([*uv(), "pip", "install", "-q", "--python", str(venv / "bin" / "python"),
                  "-c", str(constraints), f"dagster=={DAGSTER_VERSION}", "psycopg[binary]",
                  *editables], env={**env, "UV_COMPILE_BYTECODE": "1"})  # fmt: skip
            marker.write_text(_recipe())
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return venv


@dataclass
class DagsterEnv:
    """The Dagster venv and a throwaway ``DAGSTER_HOME`` (``execute_in_process`` needs no
    instance set-up; the home only keeps Dagster from writing anywhere else)."""

    venv: Path
    home: Path

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return {
            **os.environ,
            "DAGSTER_HOME": str(self.home),
            "DAGSTER_DISABLE_TELEMETRY": "1",
            "RUNTIME__DLTHUB_TELEMETRY": "false",
            **(extra or {}),
        }

    @classmethod
    def create(cls, home: Path) -> DagsterEnv:
        venv = ensure_dagster_venv()
        home.mkdir(parents=True, exist_ok=True)
        (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
        return cls(venv, home)

    def popen(self, script: str, *args: str, env: dict[str, str] | None = None,
              cwd: Path | None = None) -> subprocess.Popen[str]:  # fmt: skip
        """Start ``python -c script args...`` in the Dagster venv without waiting."""
        return subprocess.Popen(
            [self.python, "-c", script, *args], env=self.env(env), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, cwd=str(cwd) if cwd else None,
        )  # fmt: skip

    def run(self, script: str, *args: str, env: dict[str, str] | None = None,
            timeout: float = 600) -> subprocess.CompletedProcess[str]:  # fmt: skip
        """Run ``python -c script args...`` in the Dagster venv."""
        return subprocess.run(
            [self.python, "-c", script, *args], env=self.env(env), capture_output=True,
            text=True, timeout=timeout,
        )  # fmt: skip
