"""Whether a process on this host is still alive: the one test behind every "dead holder".

A ledger row, a backfill chunk lease and a run lease all record the host and pid of whoever
holds them. On the same host a vanished pid proves the holder dead at once, without waiting for
a lease or a heartbeat to expire; on another host a pid proves nothing and is never judged.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path


def pid_alive(pid: int) -> bool:
    """``True`` while a process with ``pid`` exists on this host and is not a zombie."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    stat = Path(f"/proc/{pid}/stat")
    try:  # a killed child its parent has not reaped yet is a zombie: gone for our purpose
        return stat.read_text().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def holder_process(token: str | None) -> tuple[str, int] | None:
    """``(host, pid)`` of the process behind a worker token, ``None`` when it does not say.

    Tokens are ``host:pid:<hex>`` (one invocation) or ``host:pid:<hex>/w<k>:<worker pid>`` (a
    worker subprocess: its own pid, not its parent's).
    """
    if not token:
        return None
    base, _, worker = token.partition("/")
    parts = base.split(":")
    if len(parts) < 3:
        return None
    pid_text = worker.rpartition(":")[2] if worker else parts[-2]
    if worker and ":" not in worker:
        return None  # a worker token without its own pid: only its lease can tell
    try:
        return ":".join(parts[:-2]), int(pid_text)
    except ValueError:
        return None


def holder_gone(token: str | None) -> str | None:
    """Why ``token``'s process is known dead (same host, pid not running), else ``None``.

    Another host's process, or a pid still running (possibly reused), is never judged dead
    here: its lease decides.
    """
    found = holder_process(token)
    if found is None:
        return None
    host, pid = found
    if host != socket.gethostname() or pid == os.getpid() or pid_alive(pid):
        return None
    return f"its process (pid {pid} on {host}) is gone"
