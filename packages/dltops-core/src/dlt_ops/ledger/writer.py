"""``LedgerWriter``: one run's record, fanned out to every configured sink, best-effort.

Each sink call runs in its own ``try``/``except``: a failing sink is logged at ERROR with the
seed's wording and never affects another sink or the run. While the run is alive a daemon
thread renews ``heartbeat_at`` so ``status`` can tell a live run from an abandoned one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from dlt_ops.clock import utcnow
from dlt_ops.ledger.model import RunRecord, RunStatus
from dlt_ops.ledger.sinks import LedgerSink
from dlt_ops.log import get_logger
from dlt_ops.redact import redact

log = get_logger(__name__)


class LedgerWriter:
    """Writes one run's start, heartbeats and finish to ``sinks`` (``(name, sink)`` pairs)."""

    def __init__(
        self,
        sinks: Sequence[tuple[str, LedgerSink]],
        record: RunRecord,
        *,
        heartbeat_seconds: float = 30.0,
        release: Callable[[], None] | None = None,
        refused: Callable[[str, RunRecord], None] | None = None,
    ) -> None:
        self.sinks = list(sinks)
        # a finish a sink refused (the destination is gone): kept locally for a later command
        # to write (``ledger/outbox.py``), so the cause of the failure is not lost
        self._refused = refused
        # called after every write: on a single-writer engine the ledger lets go of the
        # database between writes, so readers see the run as running
        self._release = release
        self.record = record
        self.heartbeat_seconds = heartbeat_seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @contextmanager
    def borrowed(self) -> Iterator[list[tuple[str, LedgerSink]]]:
        """The sinks, for a ledger write besides start/heartbeat/finish (closing dead runs'
        rows): no heartbeat interleaves, and the connection is let go after it."""
        with self._lock:
            try:
                yield self.sinks
            finally:
                self._let_go()

    def _let_go(self) -> None:
        if self._release is None:
            return
        try:
            self._release()
        except Exception as exc:  # closing is housekeeping, never a failure
            log.debug("ledger.release_failed", error=redact(f"{type(exc).__name__}: {exc}"))

    def _each(self, phase: str, call: str, *, keep: bool = False) -> None:
        try:
            self._write(phase, call)
        finally:
            if not keep:
                self._let_go()

    def _write(self, phase: str, call: str) -> None:
        for name, sink in self.sinks:
            try:
                getattr(sink, call)(self.record)
            except Exception as exc:  # observability never fails a run (seed 000)
                target = getattr(sink, "target", name)
                log.error(
                    f"Failed to write run-{phase} row to {target} (non-fatal, run continues)",
                    sink=name,
                    run_id=self.record.run_id,
                    error=redact(f"{type(exc).__name__}: {exc}"),
                )
                if call == "finish" and self._refused is not None:
                    self._refused(name, self.record)

    def start(self, *, keep: bool = False) -> None:
        """Record the start on every sink and begin heartbeats; ``keep`` holds the connection
        for a :meth:`borrowed` write that follows at once (one open, not two)."""
        with self._lock:
            self._each("start", "start", keep=keep)
        if self.heartbeat_seconds > 0:
            self._thread = threading.Thread(
                target=self._beat, name=f"ledger-heartbeat-{self.record.run_id[:8]}", daemon=True
            )
            self._thread.start()

    def _beat(self) -> None:
        while not self._stop.wait(self.heartbeat_seconds):
            with self._lock:
                if self._stop.is_set():
                    return
                self.record = self.record.replace(heartbeat_at=utcnow())
                self._each("heartbeat", "heartbeat")

    def finish(self, status: RunStatus, *, keep: bool = False, **fields: Any) -> RunRecord:
        """Stop heartbeats and record the terminal state (``dlt_run_id``, counts, error...);
        ``keep`` leaves the connection open for the caller to hand on."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.heartbeat_seconds + 5)
        now = utcnow()
        with self._lock:
            self.record = self.record.replace(
                status=str(status), completed_at=now, heartbeat_at=now, **fields
            )
            self._each("end", "finish", keep=keep)
        return self.record
