"""Shared plumbing for the test services that live in a cached virtualenv of their own
(the BigQuery emulator, Airflow, Dagster): where the cache is, how to call uv, how to run a
step, and how to build an orchestrator's virtualenv with this workspace installed."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path


def cache_root() -> Path:
    """``$DLTOPS_CACHE_DIR``, else ``$XDG_CACHE_HOME/dltops``, else ``~/.cache/dltops``."""
    base = os.environ.get("DLTOPS_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "dltops"


def uv() -> list[str]:
    """The uv command: on PATH, else ``python -m uv``."""
    found = shutil.which("uv")
    return [found] if found else [sys.executable, "-m", "uv"]


def run_step(
    cmd: list[str],
    unavailable: type[Exception],
    *,
    env: dict[str, str] | None = None,
    timeout: float = 600,
) -> str:
    """Run one set-up step; raise ``unavailable`` with the command and the output's tail."""
    shown = " ".join(cmd[:4])
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise unavailable(f"`{shown} ...` failed: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip()[-3000:]
        raise unavailable(f"`{shown} ...` exited with {done.returncode}: {tail}")
    return done.stdout


#: The workspace packages an orchestrator test needs (installed editable).
WORKSPACE_PACKAGES = ("dltops-core", "dltops-duckdb", "dltops-postgres")
_READY_MARKER = ".dltops-ready"


def workspace_root() -> Path:
    """The uv workspace this module lives in (``packages/dltops-core/src/dlt_ops/testing``)."""
    return Path(__file__).resolve().parents[5]


def tool_venv_dir(name: str) -> Path:
    """Where the virtualenv ``name`` (e.g. ``dagster-1.13.28``) of this workspace lives."""
    key = hashlib.sha256(str(workspace_root()).encode()).hexdigest()[:10]
    return cache_root() / f"{name}-{key}"


def ensure_tool_venv(
    venv: Path,
    requirement: str,
    unavailable: type[Exception],
    *,
    packages: tuple[str, ...] = WORKSPACE_PACKAGES,
    compile_bytecode: bool = False,
) -> Path:
    """``venv`` with ``requirement`` (``dagster==1.13.28``), ``psycopg[binary]`` and the
    workspace ``packages`` installed editable, pinned to the running environment's versions so
    the tool runs what the suite tests; built on first use under an exclusive lock (a second
    process waits, then finds the marker) and ready only once its marker is written. Raises
    ``unavailable`` naming the step that failed. ``compile_bytecode`` has uv compile the
    installed packages' bytecode (``UV_COMPILE_BYTECODE``): with ``PYTHONDONTWRITEBYTECODE``
    set, as on CI, every process that imports dlt would otherwise compile it again."""
    root = workspace_root()
    compiled = " compiled" if compile_bytecode else ""  # a venv built otherwise is rebuilt
    recipe = f"{requirement} {' '.join(packages)} {root}{compiled}\n"
    marker = venv / _READY_MARKER
    if marker.exists() and marker.read_text() == recipe:
        return venv
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if marker.exists() and marker.read_text() == recipe:
                return venv
            shutil.rmtree(venv, ignore_errors=True)
            env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
            run_step([*uv(), "venv", "-q", str(venv), "--python", sys.executable], unavailable,
                     env=env, timeout=900)  # fmt: skip
            frozen = run_step([*uv(), "pip", "freeze", "--python", sys.executable], unavailable,
                              env=env, timeout=900)  # fmt: skip
            pins = [line for line in frozen.splitlines()
                    if line and not line.startswith("-e") and " @ " not in line
                    and not line.lower().startswith(("dltops", "dlt-ops"))]  # fmt: skip
            constraints = venv / "constraints.txt"
            constraints.write_text("\n".join(pins) + "\n")
            editables = [a for p in packages for a in ("-e", str(root / "packages" / p))]
            if compile_bytecode:
                env["UV_COMPILE_BYTECODE"] = "1"
            run_step([*uv(), "pip", "install", "-q", "--python", str(venv / "bin" / "python"),
                      "-c", str(constraints), requirement, "psycopg[binary]", *editables],
                     unavailable, env=env, timeout=900)  # fmt: skip
            marker.write_text(recipe)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return venv
