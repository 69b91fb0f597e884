"""``CheckpointWriter``: checkpoint rows leave the extract loop and land from a writer thread.

A commit on the destination costs milliseconds (embedded engines fsync on commit), which
would otherwise be paid inside the extract loop, once per ``frequency`` pages. The generator
hands each row to this writer and keeps yielding; the writer inserts whatever has queued up in
one statement (one commit; the adapter's ``insert_rows``), through the same
``DestinationSession`` (its lock serializes the writer with the run's other users of the
connection).

Rows group-commit: a row queued soon after the last commit waits and lands with whatever
queued meanwhile, so a fast extract (a checkpoint every few milliseconds) pays one commit per
wait instead of one per row; ``flush()`` cuts the wait. The wait scales with what the last
commit took (:data:`WRITE_SHARE`), between :data:`GROUP_S` and :data:`GROUP_MAX_S`: the writer
stays a small, fixed share of the extract's time on a fast embedded file and on a warehouse
whose every statement takes seconds alike.

Nothing is coalesced away: every submitted row is written or reported at ERROR. ``flush()``
waits until everything submitted so far has landed; the decorator calls it before marking rows
completed and before re-raising an extraction failure, so a checkpoint logged as saved is
durable by the time the run fails.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from dlt_ops.adapters import DestinationSession, TableSpec
from dlt_ops.log import context_thread, get_logger
from dlt_ops.redact import redact

log = get_logger(__name__)

#: Group commit: the shortest wait between two commits (see _loop). A commit costs 2-5 ms of
#: CPU on an embedded engine: at 50 ms a 1000-page extract made ~18 of them.
GROUP_S = 0.25
#: ... and the longest: a process killed mid-extract loses at most this much progress.
GROUP_MAX_S = 30.0
#: Between the two, the wait is the last commit's duration divided by this share, so the
#: writer is busy at most ~1 % of the extract's time (CPU and GIL it takes from the extract).
WRITE_SHARE = 0.01
#: Rows per statement: a long wait on a fast extract can queue thousands, and engines bound a
#: statement's parameters (the tightest we ship: 10,000; 500 rows of 10 columns stay under it).
MAX_ROWS = 500
#: How long ``flush`` waits for a stuck writer before giving up (the run is not held hostage).
FLUSH_TIMEOUT_S = 60.0


def commit_gap(took_s: float) -> float:
    """How long rows wait after a commit that took ``took_s``: :data:`WRITE_SHARE` of the
    time goes to writing, within [:data:`GROUP_S`, :data:`GROUP_MAX_S`]."""
    return min(GROUP_MAX_S, max(GROUP_S, took_s / WRITE_SHARE))


class CheckpointWriter:
    """A single background writer for one resource's checkpoint rows."""

    def __init__(
        self,
        session: DestinationSession,
        spec: TableSpec,
        tag: str,
        resource: str,
    ) -> None:
        self.session = session
        self.spec = spec
        self.tag, self.resource = tag, resource
        self._pending: list[tuple[tuple[Any, ...], int, int, str]] = []
        self._busy = False
        self._stop = False
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self.written = 0
        self.failed = 0
        self._last_commit = float("-inf")  # the first row goes at once
        self._gap = GROUP_S  # the wait after the last commit (see _loop)
        self._hurry = 0  # flush() callers waiting: write at once

    def submit(self, row: Sequence[Any], page: int, records: int, value: str) -> None:
        """Queue one checkpoint row; never blocks on the destination."""
        with self._cond:
            idle = not self._pending  # else the writer already knows there is work
            self._pending.append((tuple(row), page, records, value))
            if idle:
                # only an idle writer needs waking: one in its group-commit wait takes every
                # row queued meanwhile when the wait ends, and each needless wake-up takes the
                # GIL from the extract loop (~100 a run at frequency 10, measurable there)
                self._cond.notify()
        if self._thread is None:
            self._thread = context_thread(self._loop, name=f"checkpoints{self.tag}")
            self._thread.start()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stop:
                    self._cond.wait()
                if not self._pending:
                    return
                # group commit: rows that queue up within the gap after the last commit wait
                # for it and land together; flush() and close() cut the wait
                due = self._last_commit + self._gap
                while not (self._stop or self._hurry) and (left := due - time.monotonic()) > 0:
                    self._cond.wait(left)
                batch, self._pending = self._pending, []
                self._busy = True
            started = time.monotonic()
            try:
                for start in range(0, len(batch), MAX_ROWS):
                    self._write(batch[start : start + MAX_ROWS])
            finally:
                with self._cond:
                    self._last_commit = time.monotonic()
                    self._gap = commit_gap(self._last_commit - started)
                    self._busy = False
                    self._cond.notify_all()

    def _write(self, batch: list[tuple[tuple[Any, ...], int, int, str]]) -> None:
        try:
            self.session.insert_rows(self.spec, [row for row, *_ in batch])
        except Exception as exc:  # bookkeeping never kills a healthy extract
            self.failed += len(batch)
            for _, page, _, _ in batch:
                log.error(
                    f"{self.tag} Failed to save checkpoint at page {page} "
                    f"({redact(str(exc))}). The run continues; a resume would restart from the "
                    "last checkpoint that did land.",
                    resource=self.resource,
                    page=page,
                )
            return
        self.written += len(batch)
        for _, page, records, value in batch:
            log.info(
                f"{self.tag} Checkpoint saved: page {page}, {records} records, value: {value}",
                resource=self.resource,
                page=page,
                records=records,
                checkpoint_value=value,
            )

    def flush(self, timeout: float = FLUSH_TIMEOUT_S) -> bool:
        """Wait until every submitted row has been written (or failed); ``False`` on timeout."""
        with self._cond:
            self._hurry += 1
            self._cond.notify_all()
        try:
            return self._wait_drained(timeout)
        finally:
            with self._cond:
                self._hurry -= 1

    def _wait_drained(self, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(
                lambda: (
                    not (self._pending or self._busy)
                    or self._thread is None
                    or not self._thread.is_alive()
                ),
                timeout=timeout,
            )

    def close(self) -> None:
        """Flush, then stop the thread."""
        if self._thread is None:
            return
        if not self.flush():
            log.error(
                f"{self.tag} Checkpoint writer did not finish in time", resource=self.resource
            )
        with self._cond:
            self._stop = True
            self._cond.notify_all()
        self._thread.join(timeout=FLUSH_TIMEOUT_S)
        self._thread = None
