"""The dead-process test behind every "dead holder": only a gone pid on this host is dead."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

from dlt_ops.liveness import holder_gone, holder_process, pid_alive

HOST = socket.gethostname()


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()  # reaped: the pid names no process now
    return proc.pid


def test_live_and_impossible_pids() -> None:
    assert pid_alive(os.getpid()) is True
    assert pid_alive(1) is True
    assert pid_alive(0) is False
    assert pid_alive(-5) is False
    assert pid_alive(_dead_pid()) is False


def test_an_unreaped_child_is_a_zombie_and_counts_as_gone() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # exited but not reaped: state Z
        stat = open(f"/proc/{proc.pid}/stat").read()
        if stat.rpartition(")")[2].split()[0] == "Z":
            break
        time.sleep(0.02)
    try:
        assert pid_alive(proc.pid) is False
    finally:
        proc.wait()


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("box:123:ab12", ("box", 123)),
        ("box:123:ab12/w2:456", ("box", 456)),  # a worker's own pid, not its parent's
        ("fe80::1:123:ab12", ("fe80::1", 123)),  # a host name may hold colons
        ("box:123:ab12/w2", None),  # a worker token without its pid
        ("box:123:ab12/w2:x", None),
        ("box:12a:ab12", None),
        ("box:123", None),
        ("box", None),
        ("", None),
        (None, None),
    ],
)
def test_tokens_name_their_holder(token: str | None, expected: tuple[str, int] | None) -> None:
    assert holder_process(token) == expected


def test_only_a_gone_pid_on_this_host_is_judged_dead() -> None:
    dead = _dead_pid()
    assert holder_gone(f"{HOST}:{dead}:ab12") == f"its process (pid {dead} on {HOST}) is gone"
    assert holder_gone(f"{HOST}:1:ab12/w1:{dead}") == (
        f"its process (pid {dead} on {HOST}) is gone"
    )
    assert holder_gone(f"elsewhere-{HOST}:{dead}:ab12") is None  # another host: its lease decides
    assert holder_gone(f"{HOST}:{os.getpid()}:ab12") is None
    assert holder_gone(f"{HOST}:1:ab12") is None  # running
    assert holder_gone(f"{HOST}:{dead}:ab12/w1") is None
    assert holder_gone(None) is None


def test_a_live_process_whose_name_holds_a_parenthesis_is_alive(tmp_path) -> None:  # noqa: ANN001
    # /proc/<pid>/stat is "pid (comm) state ...": comm may itself hold ") Z"
    odd = tmp_path / "x) Z y"
    odd.symlink_to(sys.executable)
    proc = subprocess.Popen([str(odd), "-c", "import time; time.sleep(30)"])
    try:
        deadline = time.monotonic() + 10
        while ") Z y)" not in open(f"/proc/{proc.pid}/stat").read():
            assert time.monotonic() < deadline, "the process never took its name"
            time.sleep(0.02)
        assert pid_alive(proc.pid) is True
    finally:
        proc.kill()
        proc.wait()
