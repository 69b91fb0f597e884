"""Shared plumbing for the test services that live in a cached virtualenv of their own
(the BigQuery emulator, Airflow): where the cache is, how to call uv, how to run a step."""

from __future__ import annotations

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
