"""`pipeline run` progress: on stderr, live on a terminal, plain lines only when asked, never
with --json; stdout unchanged."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

from dlt_ops.cli.progress import RunProgressLine
from tests.conftest import CLI
from tests.conftest import EVENTS_ON_DUCKDB as CONFIG


def test_plain_lines_say_step_rows_and_totals(tmp_path: Path) -> None:
    out = tmp_path / "progress.txt"
    with out.open("w") as stream, RunProgressLine(stream, live=False, every_s=3600) as line:
        line.step("extract")
        line.rows("events", 1000)
        line.rows("events", 234)
        line.rows("orders", 5)
        line.step("load")
    lines = out.read_text().splitlines()
    assert lines[0].startswith("progress: extract · 0s")
    assert "events 1,234 rows, orders 5 rows" in lines[1]  # the step's totals when it ends
    assert lines[2].startswith("progress: load")


def test_piped_run_shows_no_progress_unless_asked(project, templates, cli) -> None:  # noqa: ANN001
    root = project(CONFIG, {"events_src": templates["events"]}, name="quiet")
    quiet = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    assert quiet.returncode == 0, quiet.stderr
    assert "progress:" not in quiet.stderr + quiet.stdout
    root = project(CONFIG, {"events_src": templates["events"]}, name="asked")
    asked = cli("pipeline", "run", "-s", "events_src", "-y", "--progress", "plain", cwd=root)
    assert asked.returncode == 0, asked.stderr
    assert "progress: extract" in asked.stderr and "progress: load" in asked.stderr
    assert re.search(r"progress: extract · \d+s · events 6 rows", asked.stderr)  # step total
    root = project(CONFIG, {"events_src": templates["events"]}, name="json")
    assert "progress:" not in asked.stdout
    as_json = cli("pipeline", "run", "-s", "events_src", "-y", "--json", "--progress", "plain",
                  cwd=root)  # fmt: skip
    assert as_json.returncode == 0, as_json.stderr
    assert "progress:" not in as_json.stderr
    assert json.loads(as_json.stdout)["status"] == "completed"


def _run_on_a_terminal(root: Path, *args: str) -> tuple[subprocess.Popen[str], str, str]:
    """``pipeline run`` with stderr on a pseudo-terminal: (process, stdout, what the tty saw)."""
    leader, follower = pty.openpty()
    env = {**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false"}
    proc = subprocess.Popen(
        [sys.executable, "-c", CLI, "pipeline", "run", *args],
        cwd=root, env=env, stdout=subprocess.PIPE, stderr=follower, text=True,
    )  # fmt: skip
    os.close(follower)
    seen = b""
    while True:  # read the terminal until the child closes it
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    stdout, _ = proc.communicate(timeout=120)
    os.close(leader)
    return proc, stdout, seen.decode(errors="replace")


def test_terminal_gets_a_live_line_on_stderr(project, templates) -> None:  # noqa: ANN001
    root = project(CONFIG, {"events_src": templates["events"]})
    proc, stdout, text = _run_on_a_terminal(root, "-s", "events_src", "-y")
    assert proc.returncode == 0, text
    assert "\rextract · " in text and "\rload · " in text, text  # one line, redrawn
    assert "progress:" not in text and "extract" not in stdout


def test_quiet_prints_only_errors(project, templates, cli) -> None:  # noqa: ANN001
    root = project(CONFIG, {"events_src": templates["events"], "bad_src": templates["raising"]})
    proc, stdout, seen = _run_on_a_terminal(root, "-s", "events_src", "-y", "--quiet")
    assert proc.returncode == 0, seen
    assert stdout == "" and seen == ""  # no block, progress, log line, receipt or ✓ line
    status = json.loads(cli("pipeline", "status", "--json", cwd=root).stdout)
    assert {s["source"]: s["runs"][0]["status"] for s in status if s["runs"]} == {
        "events_src": "completed"
    }
    proc, stdout, seen = _run_on_a_terminal(root, "-s", "bad_src", "-y", "-q")
    assert proc.returncode == 1 and stdout == ""
    lines = seen.splitlines()
    assert lines[-1].startswith("error: ") and "Pipeline configuration" not in seen
    assert all("error" in line for line in lines), lines  # the log alert sink's error, then ours
    no_yes = cli("pipeline", "run", "-s", "events_src", "-q", cwd=root)
    assert no_yes.returncode == 2 and "--yes" in no_yes.stderr
