"""``pipeline run``'s progress on stderr: the step, rows per table and the elapsed time.

On a terminal one line is redrawn in place (at most ten times a second, and once a second while
dlt is silent, so the clock moves during a slow extract); ``--progress plain`` prints a line
every few seconds and at each step instead (for logs); nothing is shown through a pipe unless
asked, nor with ``--json``. stdout is never touched.
"""

from __future__ import annotations

import sys
import threading
import time
from enum import StrEnum
from typing import IO


class ProgressMode(StrEnum):
    """``--progress`` choices."""

    auto = "auto"
    plain = "plain"
    off = "off"


def _elapsed(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class RunProgressLine:
    """A :class:`~dlt_ops.runner.progress.ProgressSink` drawing on ``stream``."""

    def __init__(self, stream: IO[str], *, live: bool, every_s: float = 5.0) -> None:
        self.stream, self.live, self.every_s = stream, live, every_s
        self.started = time.monotonic()
        self.current = "setup"
        self.counts: dict[str, dict[str, int]] = {}
        self._lock = threading.Lock()
        self._drawn = 0.0
        self._width = 0
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    # -- ProgressSink -------------------------------------------------------------------------
    def step(self, name: str) -> None:
        """A new step: always shown."""
        with self._lock:
            if name == self.current:  # dlt re-enters a step per source and package
                return
            if not self.live and self.counts.get(self.current):
                self._draw(force=True)  # the finished step's totals, for the log
            self.current = name
            self.counts.setdefault(name, {})
            self._draw(force=True)

    def rows(self, table: str, inc: int) -> None:
        """More rows: shown when the last drawing is old enough."""
        with self._lock:
            step = self.counts.setdefault(self.current, {})
            step[table] = step.get(table, 0) + inc
            self._draw(force=False)

    # -- drawing ------------------------------------------------------------------------------
    def text(self, now: float | None = None) -> str:
        """``extract · 12s · events 12,000 rows, orders 3 rows``."""
        now = now if now is not None else time.monotonic()
        tables = self.counts.get(self.current, {})
        rows = ", ".join(f"{t} {n:,} rows" for t, n in tables.items())
        return " · ".join(p for p in (self.current, _elapsed(now - self.started), rows) if p)

    def _draw(self, *, force: bool) -> None:
        now = time.monotonic()
        gap = 0.1 if self.live else self.every_s
        if not force and now - self._drawn < gap:
            return
        self._drawn = now
        line = self.text(now)
        if self.live:
            pad = " " * max(self._width - len(line), 0)
            self.stream.write(f"\r{line}{pad}")
            self._width = len(line)
        else:
            self.stream.write(f"progress: {line}\n")
        self.stream.flush()

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            with self._lock:
                self._draw(force=True)

    def __enter__(self) -> RunProgressLine:
        self.started = time.monotonic()  # the run's clock, not the confirmation prompt's
        if self.live:
            self._ticker = threading.Thread(target=self._tick, name="run-progress", daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=2)
        with self._lock:
            if self.live and self._width:  # leave the terminal as we found it
                self.stream.write("\r" + " " * self._width + "\r")
                self.stream.flush()
            elif not self.live and self.counts.get(self.current):
                self._draw(force=True)


def run_progress(mode: ProgressMode, *, as_json: bool) -> RunProgressLine | None:
    """The display ``--progress`` asks for on this stderr (``None``: show nothing)."""
    if as_json or mode is ProgressMode.off:
        return None
    if mode is ProgressMode.plain:
        return RunProgressLine(sys.stderr, live=False)
    isatty = getattr(sys.stderr, "isatty", None)
    return RunProgressLine(sys.stderr, live=True) if isatty and isatty() else None
