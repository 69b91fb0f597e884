"""The dead-process test behind every "dead holder": only a gone pid on this host is dead."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

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


def _in_a_child(check: Callable[[], bool]) -> bool:
    """``check()`` in a forked child (which may change its user or root first)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit code
        try:
            code = 0 if check() else 1
        except BaseException:
            code = 2
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) != 2, status
    return os.WEXITSTATUS(status) == 0


def test_asking_whether_a_process_lives_sends_it_no_signal() -> None:
    # SIGHUP at its default (a shell's nohup ignores it): any signal sent would end the child
    child = (
        "import signal, time; signal.signal(signal.SIGHUP, signal.SIG_DFL); "
        "print(1, flush=True); time.sleep(30)"
    )
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"1\n"
        assert pid_alive(proc.pid) is True
    finally:
        proc.terminate()
        proc.wait()
    assert proc.returncode == -signal.SIGTERM  # our terminate ended it, nothing before it


def test_a_live_process_of_another_user_is_alive() -> None:
    parent = os.getpid()
    assert pid_alive(parent) is True  # for its own user

    def as_someone_else() -> bool:
        if os.geteuid() == 0:
            os.setuid(65534)  # nobody: may not signal root's processes
            return pid_alive(parent)
        return pid_alive(1)  # root's init

    assert _in_a_child(as_someone_else) is True


def test_a_live_process_is_alive_without_proc(tmp_path: Path) -> None:
    # as on macOS: the pid answers, /proc/<pid>/stat cannot be read, so it is not judged a zombie
    if os.geteuid() != 0:
        pytest.skip("chroot needs root (CI runs as root)")

    assert pid_alive(os.getpid()) is True  # with /proc

    def without_proc() -> bool:
        os.chroot(tmp_path)
        return pid_alive(os.getpid())

    assert _in_a_child(without_proc) is True
