from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from dlt_ops.atomic_file import write_atomically
from dlt_ops.jsonl import append_events, read_events, rewriting


def _lock_waiters(path: Path) -> int:
    """Blocked flock requests on ``path``'s inode, from /proc/locks (lines with '->')."""
    inode = f":{os.stat(path).st_ino} "
    with open("/proc/locks") as locks:
        return sum(1 for line in locks if "->" in line and inode in line)


def test_an_append_waiting_on_a_rewrite_lands_in_the_new_file(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    append_events(path, [{"event": "start", "n": 1}])
    appender = threading.Thread(target=append_events, args=(path, [{"event": "finish", "n": 2}]))
    with rewriting(path):
        kept = read_events(path)
        appender.start()
        deadline = time.monotonic() + 30
        while not _lock_waiters(path):  # the append holds the old file, waiting for the lock
            assert time.monotonic() < deadline, "the append never waited for the rewrite's lock"
        compacted = [{"event": "compact", "n": e["n"]} for e in kept]
        write_atomically(path, "".join(json.dumps(e) + "\n" for e in compacted))
    appender.join(timeout=30)
    assert [(e["event"], e["n"]) for e in read_events(path)] == [("compact", 1), ("finish", 2)]


def test_appends_go_on_after_the_file_is_removed(tmp_path: Path) -> None:
    path = tmp_path / "receipts.jsonl"
    append_events(path, [{"event": "a"}])
    path.unlink()
    append_events(path, [{"event": "b"}])
    assert read_events(path) == [{"event": "b"}]
