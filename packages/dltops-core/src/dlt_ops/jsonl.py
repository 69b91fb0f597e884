"""Append-only JSON-lines files shared by concurrent runs (the jsonl ledger and receipt store)."""

from __future__ import annotations

import fcntl
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def append_events(path: Path, events: Iterable[dict[str, Any]]) -> None:
    """Append one compact JSON line per event, whole lines under an exclusive lock (concurrent
    runs never interleave half lines)."""
    text = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events)
    if not text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.write(text)


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
