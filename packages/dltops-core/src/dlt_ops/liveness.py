"""Whether a process on this host is still alive: the one test behind every "dead holder".

A ledger row, a backfill chunk lease and a run lease all record the host and pid of whoever
holds them. On the same host a vanished pid proves the holder dead at once, without waiting for
a lease or a heartbeat to expire; on another host a pid proves nothing and is never judged.
"""

from __future__ import annotations

import os
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
