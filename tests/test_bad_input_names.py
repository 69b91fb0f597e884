"""Names and paths are checked the same way by every command: an over-long name, a name with a
line break, a name that is a path, and the same for ``--dataset``, ``--resource``, ``--run-id``
and ``--root``, exit 2 with one line saying what is wrong, never a traceback, never "no runs
recorded", and nothing is written (no lock, no database file, no ledger row).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import EVENTS_ON_DUCKDB, EVENTS_SOURCE, write_project

LONG = "x" * 300
BAD_NAMES = {
    "too long": (LONG, "is 300 characters long"),
    "line break": ("a\nb", "contains a line break"),
    "a path": ("../x", "is a path"),
}
#: (command line with {} for the name, what the name is)
COMMANDS = [
    ("pipeline run -y -s {}", "source"),
    ("pipeline status -s {}", "source"),
    ("pipeline status -d {}", "dataset"),
    ("runs list -s {}", "source"),
    ("runs list -d {}", "dataset"),
    ("backfill list -s {}", "source"),
    ("backfill list -d {}", "dataset"),
    ("pipeline clean --dry-run -s {}", "source"),
    ("pipeline clean -y -s {}", "source"),
    ("pipeline reconcile --dry-run -s {}", "source"),
    ("checkpoints list -s {}", "source"),
    ("pipeline run -y -s events_src -r {}", "resource"),
    ("pipeline run -y -s events_src -d {}", "dataset"),
    ("pipeline run -y -s events_src --run-id {}", "run id"),
    ("pipeline backfill events_src -y --from 2026-01-01T00:00:00Z --to 2026-01-02T00:00:00Z "
     "-r {}", "resource"),
    ("pipeline backfill {} -y --from 2026-01-01T00:00:00Z --to 2026-01-02T00:00:00Z", "source"),
]  # fmt: skip


def _args(template: str, name: str) -> list[str]:
    return [name if part == "{}" else part for part in template.split()]


def _assert_refused(done: subprocess.CompletedProcess[str], *, says: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stdout[-500:], done.stderr[-2000:])
    assert "Traceback" not in done.stderr and "OSError" not in done.stderr
    assert says in done.stderr, done.stderr
    line = next(ln for ln in done.stderr.splitlines() if says in ln)
    assert line.startswith(("Error:", "error:", "│")) or "Invalid value" in line, line


def _nothing_written(root: Path) -> None:
    assert not list(root.glob("*.duckdb")), list(root.glob("*.duckdb"))
    assert not (root / ".dlt-ops" / "locks").exists()
    assert not (root / ".dlt-ops" / "pipelines").exists()


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_project(
        tmp_path_factory.mktemp("names") / "proj", EVENTS_ON_DUCKDB, {"events_src": EVENTS_SOURCE}
    )


@pytest.mark.parametrize("bad", list(BAD_NAMES), ids=list(BAD_NAMES))
@pytest.mark.parametrize(("template", "subject"), COMMANDS, ids=[c for c, _ in COMMANDS])
def test_every_command_refuses_a_bad_name(root, cli, template, subject, bad) -> None:  # noqa: ANN001
    name, says = BAD_NAMES[bad]
    done = cli(*_args(template, name), cwd=root)
    _assert_refused(done, says=f"{subject} ")
    assert says in done.stderr
    _nothing_written(root)


@pytest.mark.parametrize(
    ("root_arg", "says"),
    [
        ("/tmp/" + LONG, "longer than 255 bytes"),
        ("/tmp/" + "y/" * 2100, "longer than 4095 bytes"),
        ("/tmp/a\nb", "contains a line break"),
    ],
    ids=["long component", "long path", "line break"],
)
@pytest.mark.parametrize("where", ["before", "after"])
def test_root_is_checked_before_it_is_used(root, cli, root_arg, says, where) -> None:  # noqa: ANN001
    args = ["--root", root_arg, "pipeline", "status"]
    if where == "after":
        args = ["pipeline", "status", "--root", root_arg]
    done = cli(*args, cwd=root)
    _assert_refused(done, says=says)


def test_a_root_in_a_symlink_loop_is_refused(root, cli, tmp_path) -> None:  # noqa: ANN001
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    done = cli("--root", str(tmp_path / "a"), "pipeline", "status", cwd=root)
    _assert_refused(done, says="a symlink loop")


@pytest.mark.parametrize("name", ["a\tb", "a\x1bb", "a\u2028b"], ids=["tab", "escape", "U+2028"])
def test_a_control_character_is_refused(root, cli, name) -> None:  # noqa: ANN001
    done = cli("pipeline", "status", "-s", name, cwd=root)
    _assert_refused(done, says="source ")
    assert "contains a control character" in done.stderr or "line break" in done.stderr
    good = cli("pipeline", "status", "-s", "events_src", "-d", "ds", cwd=root)  # not too eager
    assert good.returncode == 0 and "events_src" in good.stdout, good.stderr[-2000:]


@pytest.mark.parametrize(
    ("path", "says"),
    [("/tmp/" + LONG + ".html", "longer than 255 bytes"), ("/tmp/a\nb.html", "line break")],
    ids=["long component", "line break"],
)
def test_a_path_option_is_checked_like_root(root, cli, tmp_path, path, says) -> None:  # noqa: ANN001
    done = cli("report", "-o", path, cwd=root)
    _assert_refused(done, says=says)
    assert "--output" in done.stderr
    assert not Path("/tmp/a\nb.html").exists()
    good = cli("report", "-o", str(tmp_path / "fleet.html"), cwd=root)  # not too eager
    assert good.returncode == 0 and (tmp_path / "fleet.html").is_file(), good.stderr[-2000:]


def test_validate_flags_a_source_named_what_no_command_accepts(tmp_path, cli) -> None:  # noqa: ANN001
    import json

    long = "s" * 210
    source = EVENTS_SOURCE.replace('@dlt.source(name="{name}")', f'@dlt.source(name="{long}")')
    config = EVENTS_ON_DUCKDB.replace("events_src", long)
    root = write_project(tmp_path / "proj", config, {long: source})
    done = cli("pipeline", "validate", "--json", cwd=root)
    found = [f for f in json.loads(done.stdout) if f["rule"] == "explicit_source_name"]
    assert len(found) == 1 and "210 characters long" in found[0]["message"], found
    run = cli("pipeline", "run", "-s", long, "-y", cwd=root)
    _assert_refused(run, says="210 characters long")
    _nothing_written(root)
