"""``map_by_database``: answers in the callers' order, one thread per database lane, a lane's
work one after another (a session never crosses threads), at most READ_THREADS threads; reads
that never wait (the read cache answers) stay on the calling thread, and a lane that waits on
its database brings the others in side by side."""

from __future__ import annotations

import threading
import time

import pytest

from dlt_ops.target.sessions import READ_THREADS, map_by_database


def test_answers_come_back_in_the_order_asked() -> None:
    lanes = ["a", "b", "a", "c", "b"]
    assert map_by_database(lanes, lambda i: (i, lanes[i])) == list(enumerate(lanes))
    assert map_by_database([], lambda i: i) == []


def test_one_lane_runs_on_the_calling_thread() -> None:
    seen: list[int] = []
    out = map_by_database(["db"] * 3, lambda i: seen.append(threading.get_ident()) or i * 2)
    assert out == [0, 2, 4]
    assert set(seen) == {threading.get_ident()}


def test_a_lane_stays_on_one_thread_and_its_work_never_overlaps() -> None:
    lanes = ["a", "b", "a", "b", "a"]
    threads: dict[str, set[int]] = {"a": set(), "b": set()}
    busy: dict[str, int] = {"a": 0, "b": 0}
    overlaps: list[str] = []
    lock = threading.Lock()

    def work(i: int) -> int:
        lane = lanes[i]
        with lock:
            threads[lane].add(threading.get_ident())
            busy[lane] += 1
            if busy[lane] > 1:
                overlaps.append(lane)
        time.sleep(0.02)
        with lock:
            busy[lane] -= 1
        return i

    assert map_by_database(lanes, work) == [0, 1, 2, 3, 4]
    assert overlaps == []
    assert len(threads["a"]) == 1 and len(threads["b"]) == 1
    assert threads["a"] != threads["b"]  # different databases are read side by side


def test_no_more_than_read_threads_at_once() -> None:
    assert READ_THREADS == 4
    lanes = [f"db{i}" for i in range(8)]
    running, peak = 0, 0
    lock = threading.Lock()

    def work(i: int) -> int:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.05)
        with lock:
            running -= 1
        return i

    started = time.monotonic()
    assert map_by_database(lanes, work) == list(range(8))
    assert peak == READ_THREADS
    assert time.monotonic() - started < 8 * 0.05  # side by side, not one after another


def test_reads_that_never_wait_stay_on_the_calling_thread() -> None:
    """Threads only take turns on the GIL for answers the read cache gives: none start."""
    lanes = [f"db{i}" for i in range(50)]
    seen: set[int] = set()
    before = threading.active_count()
    assert map_by_database(lanes, lambda i: seen.add(threading.get_ident()) or i) == list(range(50))
    assert seen == {threading.get_ident()}
    assert threading.active_count() == before  # the watcher is gone too


def test_a_lane_waiting_on_its_database_brings_the_others_in_side_by_side() -> None:
    """Lane a cannot finish before lane b has started: read one after another, it would wait
    out its whole timeout."""
    b_started = threading.Event()
    waited: list[bool] = []

    def work(i: int) -> int:
        if i == 0:
            waited.append(b_started.wait(timeout=30))
        elif i == 1:
            b_started.set()
        return i

    assert map_by_database(["a", "b", "c"], work) == [0, 1, 2]
    assert waited == [True]


def test_a_lane_that_fails_on_a_helper_thread_fails_the_call() -> None:
    b_started = threading.Event()

    def work(i: int) -> int:
        if i == 0:
            b_started.wait(timeout=30)
        elif i == 1:
            b_started.set()
            raise ValueError("ledger b is broken")
        return i

    with pytest.raises(ValueError, match="ledger b is broken"):
        map_by_database(["a", "b", "c", "d"], work)
