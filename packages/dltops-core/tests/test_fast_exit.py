"""The CLI leaves without the interpreter's teardown, keeping everything a normal exit does."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

#: Block-buffered stdout in the child, as for a real pipe (this machine may set PYTHONUNBUFFERED).
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}

#: A module-level object whose finalizer only the interpreter's teardown would run.
TEARDOWN_PROBE = """
class Probe:
    def __del__(self):
        print("teardown ran", flush=True)

probe = Probe()
"""


def _python(
    code: str, *argv: str, flags: tuple[str, ...] = (), cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *flags, "-c", textwrap.dedent(code), *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
        env=ENV,
    )


def test_a_finished_command_skips_the_teardown_but_not_its_output() -> None:
    done = _python(
        TEARDOWN_PROBE
        + "import sys; sys.argv = ['dlt-ops', '--version']\nfrom dlt_ops.cli import main\nmain()\n"
    )
    assert done.returncode == 0
    assert done.stdout.startswith("dlt-ops ")
    assert "teardown ran" not in done.stdout


def test_an_error_keeps_its_exit_code_and_message(tmp_path: Path) -> None:
    done = _python(
        TEARDOWN_PROBE
        + "import sys; sys.argv = ['dlt-ops', 'pipeline', 'status']\n"
        + "from dlt_ops.cli import main\nmain()\n",
        cwd=tmp_path,  # not a project: the documented exit code 2
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and "teardown ran" not in done.stdout


LEAVE = """
import atexit, sys, threading
from dlt_ops.fast_exit import leave

atexit.register(lambda: open(sys.argv[1], "w").write("atexit ran"))
sys.stdout.write("unflushed output")  # no newline, no flush: leave() must flush it
{setup}
leave(3)
print(" / leave returned")
"""


def test_leave_runs_the_exit_callbacks_and_flushes(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    done = _python(LEAVE.format(setup=""), str(marker))
    assert (done.returncode, done.stdout) == (3, "unflushed output")
    assert marker.read_text() == "atexit ran"


def test_leave_waits_for_threads_as_a_normal_exit_does(tmp_path: Path) -> None:
    marker, done_file = tmp_path / "marker", tmp_path / "thread-done"
    # a non-daemon thread still working, and an idle thread pool nobody shut down: a normal
    # exit waits for the first and wakes the second; so must leave() (or it would hang)
    setup = (
        "import concurrent.futures, time\n"
        "pool = concurrent.futures.ThreadPoolExecutor(1); pool.submit(int).result()\n"
        "def work():\n"
        "    time.sleep(0.3)\n"
        f"    open({str(done_file)!r}, 'w').write('done')\n"
        "threading.Thread(target=work).start()"
    )
    done = _python(LEAVE.format(setup=setup), str(marker))
    assert (done.returncode, done.stdout) == (3, "unflushed output")
    assert done_file.read_text() == "done" and marker.read_text() == "atexit ran"


def test_leave_steps_aside_in_development_mode(tmp_path: Path) -> None:
    marker = tmp_path / "marker"  # -X dev: its teardown reports unclosed resources
    done = _python(LEAVE.format(setup=""), str(marker), flags=("-X", "dev"))
    assert done.returncode == 0
    assert done.stdout == "unflushed output / leave returned\n"
    assert marker.read_text() == "atexit ran"


def test_a_closed_stdout_exits_120_as_the_interpreter_would(tmp_path: Path) -> None:
    code = textwrap.dedent(LEAVE.format(setup="")).replace("leave(3)", "leave(0)")
    with subprocess.Popen(
        [sys.executable, "-c", code, str(tmp_path / "marker")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    ) as proc:
        assert proc.stdout is not None
        proc.stdout.close()  # the reader went away (`dlt-ops ... | head -0`)
        assert proc.wait(timeout=120) == 120
