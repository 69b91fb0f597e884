"""The run lock files under ``.dlt-ops/locks``: where they are and what their note says.

A run on a single-writer engine (or at core tier) holds its source's lease as an ``flock`` on
``.dlt-ops/locks/<destination>/<dataset>/<source>.lock`` and writes a note into the file naming
itself. The runner's lease takes and drops the lock; ``pipeline status`` reads the note when the
database file is busy, to show the run that holds it as ``running`` rather than the ledger as
unreadable. Reading a note never touches the lock, so a look can never make a run's start fail.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dlt_ops.clock import utcnow
from dlt_ops.liveness import pid_alive
from dlt_ops.project.model import STATE_DIR

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig
    from dlt_ops.destinations import ResolvedDestination

#: Where core-tier and single-writer lock files live, under the project's ``.dlt-ops``.
LOCKS_DIR = "locks"


def lock_file(config: ProjectConfig, where: ResolvedDestination, source: str) -> Path:
    """The lock file of ``source`` in ``where``'s destination and dataset."""
    return config.root / STATE_DIR / LOCKS_DIR / where.engine / where.dataset / f"{source}.lock"


@dataclass(frozen=True)
class LockNote:
    """What the process holding a lock file wrote into it."""

    holder: str
    run_id: str | None = None
    host: str | None = None
    pid: int | None = None
    started_at: datetime | None = None
    trigger: str | None = None

    @classmethod
    def for_this_process(cls, holder: str, run_id: str, trigger: str | None) -> LockNote:
        """The note a holder on this host writes as it takes the lock."""
        return cls(holder, run_id, socket.gethostname(), os.getpid(), utcnow(), trigger)

    def to_text(self) -> str:
        data: dict[str, Any] = {"holder": self.holder, "run_id": self.run_id, "host": self.host,
                                "pid": self.pid, "trigger": self.trigger}  # fmt: skip
        if self.started_at is not None:
            data["started_at"] = self.started_at.isoformat()
        return json.dumps(data)

    @classmethod
    def from_text(cls, text: str) -> LockNote:
        """Parse a note; an empty or garbled one names no holder."""
        try:
            data = json.loads(text or "{}")
        except ValueError:
            data = {}
        if not isinstance(data, dict):
            data = {}
        pid = data.get("pid")
        started = data.get("started_at")
        try:
            started_at = datetime.fromisoformat(started) if isinstance(started, str) else None
        except ValueError:
            started_at = None
        return cls(
            str(data.get("holder") or "another process"),
            _text_or_none(data.get("run_id")),
            _text_or_none(data.get("host")),
            pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
            started_at if started_at is None or started_at.tzinfo else None,
            _text_or_none(data.get("trigger")),
        )


def read_note(path: Path) -> LockNote:
    """The note in ``path`` (an unreadable file names no holder)."""
    try:
        return LockNote.from_text(path.read_text(encoding="utf-8"))
    except OSError:
        return LockNote.from_text("")


def live_note(path: Path) -> LockNote | None:
    """The note of a process on this host that is still alive, else ``None``.

    A note outlives its lock (the file stays when the lock is dropped), so a note counts only
    while its pid runs here; another host's note proves nothing and is never believed.
    """
    if not path.is_file():
        return None
    note = read_note(path)
    if note.pid is None or note.host != socket.gethostname() or note.run_id is None:
        return None
    return note if pid_alive(note.pid) else None


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


__all__ = ["LOCKS_DIR", "LockNote", "live_note", "lock_file", "read_note"]
