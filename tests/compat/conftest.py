"""dlt-ops 0.1 itself, from PyPI, in a cached virtualenv of its own (built on first use)."""

from __future__ import annotations

import fcntl
import os
import sys
from pathlib import Path

import pytest

from dlt_ops.testing._tool_venv import cache_root, run_step, uv

REQUIREMENT = "dlt-ops[duckdb,postgres]==0.1.0"


class Unavailable(RuntimeError):
    """The 0.1 virtualenv could not be built."""


def _venv() -> Path:
    venv = cache_root() / "dlt-ops-0.1.0"
    marker = venv / ".ready"
    if marker.exists():
        return venv
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / "dlt-ops-0.1.0.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.exists():
            env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
            run_step([*uv(), "venv", "-q", "--clear", str(venv), "--python", sys.executable],
                     Unavailable, env=env)  # fmt: skip
            run_step([*uv(), "pip", "install", "-q", "--python", str(venv / "bin" / "python"),
                      REQUIREMENT], Unavailable, env=env, timeout=900)  # fmt: skip
            marker.write_text(REQUIREMENT)
    return venv


@pytest.fixture(scope="session")
def dltops_0_1() -> Path:
    """The ``dlt-ops`` executable of release 0.1.0 (skipped off CI when PyPI is unreachable)."""
    try:
        return _venv() / "bin" / "dlt-ops"
    except Unavailable as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"dlt-ops 0.1.0 could not be installed: {exc}")
