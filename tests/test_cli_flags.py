"""One meaning per flag (#28): ``-r`` is ``--resource`` on every command, the project root is
``--root`` only; ``backfill`` takes ``-y`` like ``run``; ``--quiet`` prints only errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import CLI
from tests.conftest import EVENTS_ON_DUCKDB as CONFIG

TWO_SOURCES = CONFIG + '\n[sources.bad_src.dlt_ops]\nschedule = "@daily"\n'
#: a batch-level ``warn`` assertion that always trips: a real warning-level log line per run
WARNING_RUN = (
    CONFIG
    + """
[sources.events_src.dlt_ops.assertions.events]
min_rows_per_load = { value = 100, on_failure = "warn" }
"""
)
WINDOW = ("--from", "2026-01-01T00:00:00Z", "--to", "2026-01-03T00:00:00Z", "--chunk", "1d")


def _runs(proc: subprocess.CompletedProcess[str]) -> dict[str, list[dict]]:
    assert proc.returncode == 0, proc.stderr
    return {s["source"]: s["runs"] for s in json.loads(proc.stdout)}


def test_status_r_filters_by_resource(project, templates, cli) -> None:  # noqa: ANN001
    root = project(CONFIG, {"events_src": templates["events"]})
    scoped = cli("pipeline", "run", "-s", "events_src", "-r", "events", "-y", cwd=root)
    assert scoped.returncode == 0, scoped.stderr
    assert cli("pipeline", "run", "-s", "events_src", "-y", cwd=root).returncode == 0
    every = _runs(cli("pipeline", "status", "--json", cwd=root))["events_src"]
    only = _runs(cli("pipeline", "status", "-r", "events", "--json", cwd=root))["events_src"]
    assert len(every) == 2
    assert [r["resource_name"] for r in only] == ["events"]


def test_fail_on_with_r_as_a_root_is_not_a_silent_exit_0(project, templates, cli) -> None:  # noqa: ANN001
    sources = {"events_src": templates["events"], "bad_src": templates["raising"]}
    root = project(TWO_SOURCES, sources)
    assert cli("pipeline", "run", "-s", "bad_src", "-y", cwd=root).returncode == 1
    # the old global `-r DIR` habit, on the subcommand: `-r` there is --resource
    for where in (".", str(root)):
        proc = cli("pipeline", "status", "--fail-on", "failed", "-r", where, cwd=root)
        assert proc.returncode == 2, (where, proc.stdout, proc.stderr)
        assert "--root" in proc.stderr and "no runs recorded" not in proc.stdout
    # a resource no selected source has: an error naming the ones it does have
    proc = cli("pipeline", "status", "--fail-on", "failed", "-r", "nope", cwd=root)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "nope" in proc.stderr and "events" in proc.stderr and "rows" in proc.stderr
    # the root spelled out still works, and the failed newest run trips the alert
    proc = cli("--root", str(root), "pipeline", "status", "--fail-on", "failed", cwd=root.parent)
    assert proc.returncode == 1, proc.stderr
    assert "tripped by bad_src" in proc.stderr


def test_r_on_a_group_is_refused_with_a_hint(project, templates, cli) -> None:  # noqa: ANN001
    # before the command, `-r DIR` is 0.1's root (accepted with a note: tests/compat); on a
    # group it is neither, and the error says where the root option went
    root = project(CONFIG, {"events_src": templates["events"]})
    proc = cli("pipeline", "-r", str(root), "status", cwd=root.parent)
    assert proc.returncode == 2, proc.stdout
    assert "--root" in proc.stderr and "--resource" in proc.stderr


def test_completion_offers_root_without_a_short_flag_and_r_as_resource(tmp_path: Path) -> None:
    def complete(*words: str) -> set[str]:
        env = {
            **os.environ,
            "_DLT_OPS_COMPLETE": "complete_bash",
            "COMP_WORDS": " ".join(("dlt-ops", *words)),
            "COMP_CWORD": str(len(words)),
        }
        proc = subprocess.run(
            [sys.executable, "-c", CLI], env=env, cwd=tmp_path, capture_output=True, text=True
        )
        return set(proc.stdout.split())

    top = complete("-")
    assert "--root" in top and "-r" not in top
    status = complete("pipeline", "status", "-")
    assert {"-r", "--resource", "--root"} <= status


def test_backfill_takes_y_like_run(project, templates, cli) -> None:  # noqa: ANN001
    root = project(CONFIG, {"events_src": templates["events"]})
    for flag in ("-y", "--yes"):
        proc = cli("pipeline", "backfill", "events_src", *WINDOW, flag, "--dry-run", cwd=root)
        assert proc.returncode == 0, proc.stderr
    done = cli("pipeline", "backfill", "events_src", *WINDOW, "-y", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "Start backfill?" not in done.stderr


def test_backfill_on_a_terminal_asks_and_declining_runs_nothing(project, templates) -> None:  # noqa: ANN001
    root = project(CONFIG, {"events_src": templates["events"]})
    master, slave = os.openpty()  # a terminal on stdin, as a person would have
    proc = subprocess.Popen(
        [sys.executable, "-c", CLI, "pipeline", "backfill", "events_src", *WINDOW],
        cwd=root, stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false"},
    )  # fmt: skip
    os.close(slave)
    os.write(master, b"n\n")
    _, err = proc.communicate(timeout=60)
    os.close(master)
    assert proc.returncode == 0, err
    assert "Start backfill?" in err and "Aborted: nothing was run." in err
    assert not (root / "events_src_pipeline.duckdb").exists()


def test_quiet_prints_no_warnings(project, templates, cli) -> None:  # noqa: ANN001
    root = project(WARNING_RUN, {"events_src": templates["events"]})
    loud = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    assert loud.returncode == 0, loud.stderr
    levels = [json.loads(line)["level"] for line in loud.stderr.splitlines() if line[:1] == "{"]
    assert "warning" in levels  # the path really logs a warning
    quiet = cli("pipeline", "run", "-s", "events_src", "-y", "--quiet", cwd=root)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout == ""
    assert "warn" not in quiet.stderr, quiet.stderr
