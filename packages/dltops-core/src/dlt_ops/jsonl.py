"""Append-only JSON-lines files shared by concurrent runs (the jsonl ledger and receipt store)."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any


def append_events(path: Path, events: Iterable[dict[str, Any]]) -> None:
    """Append one compact JSON line per event, whole lines under an exclusive lock (concurrent
    runs never interleave half lines)."""
    text = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events)
    if not text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        with open(path, "a", encoding="utf-8") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            if _still_at(handle, path):
                handle.write(text)
                return
        # a prune replaced the file while this append waited for the lock: the lines belong
        # in the new file, not in the unlinked one


def _still_at(handle: IO[str], path: Path) -> bool:
    try:
        return os.fstat(handle.fileno()).st_ino == os.stat(path).st_ino
    except FileNotFoundError:
        return False


@contextmanager
def rewriting(path: Path) -> Iterator[None]:
    """Hold ``path``'s append lock while it is read and replaced (``write_atomically``):
    appends wait, then go to the new file, so no line lands in the replaced one and is lost."""
    with open(path, "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def read_events(path: Path) -> list[dict[str, Any]]:
    """Every parsed line of ``path`` (``[]`` when it does not exist)."""
    if not path.exists():
        return []
    out = []
    with open(path, encoding="utf-8") as handle:
        for raw in handle:
            try:
                out.append(json.loads(raw))
            except ValueError:
                continue  # a torn last line from a killed writer is skipped, not fatal
    return out
