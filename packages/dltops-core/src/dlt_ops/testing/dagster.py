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

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from dlt_ops.testing._tool_venv import (
    WORKSPACE_PACKAGES,
    ensure_tool_venv,
    tool_venv_dir,
    workspace_root,
)

DAGSTER_VERSION = "1.13.28"
#: The workspace packages a Dagster test needs (installed editable).
PACKAGES = WORKSPACE_PACKAGES
__all__ = [
    "DagsterEnv",
    "DagsterUnavailableError",
    "cache_dir",
    "ensure_dagster_venv",
    "workspace_root",
]


class DagsterUnavailableError(RuntimeError):
    """Dagster could not be installed (the message says which step failed)."""


def cache_dir() -> Path:
    """Where the Dagster virtualenv lives."""
    return tool_venv_dir(f"dagster-{DAGSTER_VERSION}")


def ensure_dagster_venv() -> Path:
    """The virtualenv's directory, built on first use (raises :class:`DagsterUnavailableError`)."""
    return ensure_tool_venv(cache_dir(), f"dagster=={DAGSTER_VERSION}", DagsterUnavailableError,
                            packages=PACKAGES, compile_bytecode=True)  # fmt: skip


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
    def create(cls, home: Path, instance_config: str = "") -> DagsterEnv:
        """The venv (built on first use) with ``home`` as ``DAGSTER_HOME``; ``instance_config``
        is YAML added to its ``dagster.yaml`` (e.g. ``concurrency:`` pool limits)."""
        venv = ensure_dagster_venv()
        home.mkdir(parents=True, exist_ok=True)
        (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n" + instance_config)
        return cls(venv, home)

    def with_home(self, home: Path, instance_config: str = "") -> DagsterEnv:
        """The same venv with a home of its own: one Dagster instance (SQLite storage) that the
        processes of one test share and no other test sees. Its storage is created here,
        once: processes that open a fresh instance at the same time race to create tables."""
        made = DagsterEnv.create(home, instance_config)
        done = made.run("import dagster; dagster.DagsterInstance.get().get_runs(limit=1)")
        if done.returncode != 0:
            raise DagsterUnavailableError(f"a Dagster instance in {home}: {done.stderr[-3000:]}")
        return made

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
