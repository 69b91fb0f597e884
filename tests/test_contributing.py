"""CONTRIBUTING.md's test commands work from the repository root as written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "selection",
    [
        ("packages/dltops-duckdb", "-k", "test_paths or content_stamp"),
        ("packages/dltops-core/tests/test_plugins.py", "-k", "conflict"),
    ],
)
def test_one_packages_tests_run_from_the_root(selection: tuple[str, ...]) -> None:
    # -P: as `.venv/bin/pytest` does, the cwd is not on sys.path (so `tests` is not importable)
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "pytest", *selection, "-q", "-p", "no:cacheprovider"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "INTERNALERROR" not in proc.stdout + proc.stderr
    assert " passed" in proc.stdout
