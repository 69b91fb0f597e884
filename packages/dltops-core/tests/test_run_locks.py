"""Lock-file notes: what a holder writes, and when a reader may believe it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from dlt_ops.project.run_locks import LockNote, live_note, read_note


def test_a_note_round_trips(tmp_path: Path) -> None:
    note = LockNote.for_this_process("host:1:ab", "run-1", "cli")
    path = tmp_path / "s.lock"
    path.write_text(note.to_text())
    assert read_note(path) == note
    assert live_note(path) == note  # this process is alive, on this host


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        "[1, 2]",
        '{"pid": "12"}',
        '{"pid": true, "run_id": 3}',
        '{"started_at": "yesterday"}',
        '{"started_at": "2026-01-01T00:00:00"}',
    ],  # fmt: skip
)
def test_a_garbled_note_names_no_live_run(tmp_path: Path, text: str) -> None:
    path = tmp_path / "s.lock"
    path.write_text(text)
    note = read_note(path)
    assert note.pid is None or note.run_id is None or note.started_at is None
    assert live_note(path) is None


def test_a_dead_or_foreign_holder_is_not_believed(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    path = tmp_path / "s.lock"
    note = json.loads(LockNote.for_this_process("h", "run-1", "cli").to_text())
    path.write_text(json.dumps({**note, "pid": dead.pid}))
    assert live_note(path) is None  # the note outlived its process
    path.write_text(json.dumps({**note, "pid": os.getpid(), "host": f"x-{socket.gethostname()}"}))
    assert live_note(path) is None  # another host's pid proves nothing here
    assert live_note(tmp_path / "absent.lock") is None
