"""A symlink that cannot be followed in a pipeline directory (a loop, a module linked to
nothing) is a validate finding (rule ``project_links``) and a run refusal: exit 2, one line
naming the link, no ledger row, no database file; never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import EVENTS_ON_DUCKDB, EVENTS_SOURCE, write_project


def _links(root: Path, kind: str) -> list[str]:
    source = root / "my_pipeline" / "source"
    if kind == "file loop":
        (source / "a.py").symlink_to("b.py")
        (source / "b.py").symlink_to("a.py")
        return ["my_pipeline/source/a.py is a symlink loop", "my_pipeline/source/b.py"]
    if kind == "directory loop":
        (root / "my_pipeline" / "lib").symlink_to("lib")
        return ["my_pipeline/lib is a symlink loop"]
    (source / "gone.py").symlink_to("nowhere.py")
    return ["my_pipeline/source/gone.py is a symlink to nothing"]


KINDS = ["file loop", "directory loop", "dangling module"]


@pytest.mark.parametrize("kind", KINDS)
def test_validate_names_the_link(tmp_path, cli, kind) -> None:  # noqa: ANN001
    root = write_project(tmp_path / "proj", EVENTS_ON_DUCKDB, {"events_src": EVENTS_SOURCE})
    says = _links(root, kind)
    done = cli("pipeline", "validate", "--json", cwd=root)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.returncode == 1, done.stderr[-3000:]
    import json

    findings = [f for f in json.loads(done.stdout) if f["rule"] == "project_links"]
    assert [f["source"] for f in findings] == ["my_pipeline"]
    assert all(s in findings[0]["message"] for s in says), findings


@pytest.mark.parametrize("kind", KINDS)
def test_a_run_refuses_and_writes_nothing(tmp_path, cli, kind) -> None:  # noqa: ANN001
    root = write_project(tmp_path / "proj", EVENTS_ON_DUCKDB, {"events_src": EVENTS_SOURCE})
    says = _links(root, kind)
    done = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    assert done.returncode == 2, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    (line,) = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
    assert "nothing was written" in line and all(s in line for s in says), line
    assert not list(root.glob("*.duckdb"))  # no ledger row: not even the database file
    for link in [p for p in root.rglob("*") if p.is_symlink()]:
        link.unlink()
    (root / "my_pipeline" / "shared").mkdir()
    (root / "my_pipeline" / "lib").symlink_to("shared")  # a link that resolves is fine
    assert cli("pipeline", "run", "-s", "events_src", "-y", cwd=root).returncode == 0
