"""A read-only project directory (a read-only checkout, a read-only container mount).

Every command that only reads answers exactly as it does on a writable copy; a run or a backfill
is refused up front (exit 2, a message naming the directory), writes nothing anywhere — not a
file, not a ledger row in the destination — and prints no traceback.

The project is bind-mounted read-only in a private mount namespace (``unshare -m``); as root a
plain ``chmod`` would not stop anything.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from ._project import DLT_OPS, FaultProject, make_project

READS = [
    ("pipeline", "status", "--json"),
    ("runs", "list", "--json"),
    ("runs", "show", "last", "--json"),
    ("backfill", "list", "--json"),
    ("pipeline", "list", "--json"),
    ("pipeline", "resources", "-s", "paged", "--json"),
    ("checkpoints", "list", "-s", "paged", "--json"),
    ("pipeline", "validate"),
]
WRITES = [
    ("pipeline", "run", "-s", "paged", "-y"),
    ("pipeline", "backfill", "paged", "--from", "2026-01-01T00:00:00Z",
     "--to", "2026-01-02T00:00:00Z", "--chunk", "1d"),
]  # fmt: skip


def _can_mount() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount --bind -o ro / /mnt 2>/dev/null || exit 3"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


def _read_only(project: FaultProject, *args: str) -> subprocess.CompletedProcess[str]:
    root = str(project.root)
    script = f'mount --bind -o ro "{root}" "{root}" && exec "$@"'
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", script, "sh", DLT_OPS, "--root", root, *args],
        capture_output=True,
        text=True,
        env=project._env({"FT_ROWS": "40"}),
        timeout=240,
        check=False,
    )


def _files(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def _stable(stdout: str) -> str:
    """JSON output minus the ages, which move with the clock between the two calls."""
    try:
        data = json.loads(stdout)
    except ValueError:
        return stdout

    def scrub(node: object) -> object:
        if isinstance(node, dict):
            return {k: scrub(v) for k, v in node.items() if "age" not in k and k != "now"}
        if isinstance(node, list):
            return [scrub(v) for v in node]
        return node

    return json.dumps(scrub(data), sort_keys=True)


@pytest.mark.skipif(not _can_mount(), reason="needs unshare -m and a bind mount (root)")
@pytest.mark.parametrize("engine", ["duckdb", "postgres"])
def test_read_only_project(tmp_path: Path, request, figures, engine: str) -> None:  # noqa: ANN001
    db = request.getfixturevalue("postgres_database") if engine == "postgres" else None
    project = make_project(tmp_path / "proj", engine, db=db)
    first = project.cli("pipeline", "run", "-s", project.name, "-y", env={"FT_ROWS": "40"})
    assert first.returncode == 0, first.stderr
    project.cli("pipeline", "validate")  # warm the caches a writable copy would have
    runs_before = project.ledger()

    for args in READS:
        writable = project.cli(*args, env={"FT_ROWS": "40"})  # may refresh a cache
        before = _files(project.root)
        frozen = _read_only(project, *args)
        figures.trials += 1
        assert frozen.returncode == writable.returncode, (args, frozen.stderr[-2000:])
        assert "Traceback" not in frozen.stderr, (args, frozen.stderr[-2000:])
        assert _stable(frozen.stdout) == _stable(writable.stdout), args
        assert _files(project.root) == before, (args, "wrote to the read-only project")
    before = _files(project.root)
    for args in WRITES:
        refused = _read_only(project, *args)
        figures.trials += 1
        assert refused.returncode == 2, (args, refused.stdout + refused.stderr[-2000:])
        assert "not writable" in refused.stderr and "Traceback" not in refused.stderr
    assert _files(project.root) == before, "something was written to the project"
    assert project.ledger() == runs_before, "a refused run wrote a ledger row"
    figures.add(expected=40, loaded=project.query("SELECT count(*) FROM {ds}.items")[0][0])
    figures.trials -= 1  # add() counted the final row check as a trial
    figures.check()
