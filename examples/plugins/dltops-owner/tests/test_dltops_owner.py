"""The ``owner`` key as ``dlt-ops pipeline validate`` sees it (installed)."""

from __future__ import annotations

import os
import subprocess
import sys

from dlt_ops.testing import write_project

CLI = "import sys; sys.argv = ['dlt-ops', *sys.argv[1:]]; from dlt_ops.cli import main; main()"
SOURCE = """
import dlt


@dlt.resource(name="rows")
def rows():
    yield {"id": 1}


@dlt.source(name="feed")
def feed_source():
    return rows
"""


def validate(tmp_path, line):
    config = f'[sources.feed.dlt_ops]\nschedule = "@daily"\n{line}\n'
    root = write_project(tmp_path / "p", {"p/source/feed.py": SOURCE}, config)
    env = {**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false"}
    return subprocess.run(
        [sys.executable, "-c", CLI, "pipeline", "validate"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_key_is_known(tmp_path):
    done = validate(tmp_path, 'owner = "data-platform"')
    assert "unknown key" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert "owner" not in done.stdout + done.stderr


def test_a_wrong_value_is_refused_quoting_what_is_expected(tmp_path):
    done = validate(tmp_path, "owner = 7")
    assert done.returncode != 0
    assert "a team name (a non-empty string)" in done.stdout + done.stderr
