"""A holder whose process on this host is gone loses its chunk and the load lock at once."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from dlt_ops.adapters import ConnectionTarget, DestinationSession
from dlt_ops.backfill.lease import LoadLock
from dlt_ops.backfill.plan import BackfillPlan
from dlt_ops.backfill.state import BackfillState
from dlt_ops.liveness import holder_gone, holder_process
from dltops_duckdb.adapter import DuckDBAdapter

HOST = socket.gethostname()
LONG = timedelta(minutes=10)


def _dead_pid() -> int:
    """The pid of a process that ran and was reaped."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.fixture
def session(tmp_path: Path) -> Iterator[DestinationSession]:
    target = ConnectionTarget("duckdb", "bf_state", tmp_path, credentials="state.duckdb")
    with DestinationSession.open(DuckDBAdapter(), target) as opened:
        yield opened


def test_tokens_name_their_process() -> None:
    assert holder_process(f"{HOST}:123:ab12cd34") == (HOST, 123)
    assert holder_process(f"{HOST}:123:ab12cd34/w2:456") == (HOST, 456)  # the worker's own pid
    assert holder_process(f"{HOST}:123:ab12cd34/w2") is None  # no pid of its own: lease only
    assert holder_process("reader") is None and holder_process(None) is None


def test_only_a_local_gone_pid_is_dead() -> None:
    dead = _dead_pid()
    assert str(dead) in (holder_gone(f"{HOST}:{dead}:x") or "")
    assert holder_gone(f"{HOST}:{os.getpid()}:x") is None  # alive (ourselves)
    assert holder_gone(f"other-host-{HOST}:{dead}:x") is None  # another host: its lease decides


def test_chunk_of_a_dead_holder_is_reclaimed_before_its_lease(session) -> None:
    plan = BackfillPlan.build("daily", "2026-01-01T00:00:00Z", "2026-01-03T00:00:00Z", "1d")
    bid, cid = plan.backfill_id, plan.chunks[0].chunk_id
    dead = BackfillState(session, f"{HOST}:{_dead_pid()}:deadbeef")
    dead.seed(plan, "daily_pipeline")
    assert dead.claim(bid, cid, LONG)
    dead.mark_running(bid, cid)
    alive_elsewhere = BackfillState(session, f"{HOST}:{os.getpid()}:cafe0001")
    assert alive_elsewhere.claim(bid, plan.chunks[1].chunk_id, LONG)

    me = BackfillState(session, f"{HOST}:{os.getpid()}:feed0002")
    claim = me.claim(bid, cid, LONG)
    assert claim and claim.reclaimed is not None and "is gone" in (claim.reason or "")
    assert not me.claim(bid, plan.chunks[1].chunk_id, LONG)  # a live holder keeps its chunk
    assert me.rows(bid)[cid].claimed_by == me.token


def test_load_lock_of_a_dead_holder_is_taken_at_once(session) -> None:
    dead = LoadLock(BackfillState(session, f"{HOST}:{_dead_pid()}:deadbeef"), "load", LONG)
    dead.acquire()
    mine = LoadLock(BackfillState(session, f"{HOST}:{os.getpid()}:feed0003"), "load", LONG)
    mine.acquire()  # would poll for 10 minutes if the dead holder's lease were trusted
    assert mine.held
