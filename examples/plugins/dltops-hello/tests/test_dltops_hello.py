"""``dlt-ops hello``, run through dlt-ops itself (the installed entry point)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from dlt_ops.testing import write_project

CLI = "import sys; sys.argv = ['dlt-ops', *sys.argv[1:]]; from dlt_ops.cli import main; main()"


def dlt_ops(*args, cwd):
    env = {**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false"}
    return subprocess.run(
        [sys.executable, "-c", CLI, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_help_lists_the_command(tmp_path):
    shown = dlt_ops("--help", cwd=tmp_path)
    assert shown.returncode == 0 and "hello" in shown.stdout


def test_the_command_runs_in_a_project(tmp_path):
    root = write_project(tmp_path / "p", {}, '[sources.feed.dlt_ops]\nschedule = "@daily"\n')
    ran = dlt_ops("hello", "--json", cwd=root)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout) == {"sources": ["feed"]}
