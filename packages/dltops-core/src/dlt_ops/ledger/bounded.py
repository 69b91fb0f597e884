"""A ledger sink whose every call is time-bounded (see :mod:`dlt_ops.plugins.bound`).

:func:`build_sinks` wraps each sink a run (or ``clean``, or a backfill attempt) writes through,
so a sink that hangs costs the run at most its ``call_timeout_s`` and is logged as timed out,
never a stalled run. The wrapper keeps the sink's shape: it is a :class:`RunReader` exactly when
the sink is one; anything else it has is passed through as is.
"""

from __future__ import annotations

from typing import Any

from dlt_ops.ledger.model import RunRecord
from dlt_ops.ledger.sinks import LedgerQuery, LedgerSink, RunReader
from dlt_ops.plugins.bound import Bound


class BoundedLedgerSink:
    """``sink``'s ``start``, ``heartbeat`` and ``finish``, each waited for at most ``seconds``."""

    def __init__(self, name: str, sink: LedgerSink, seconds: float) -> None:
        self.inner = sink
        self.target: str = getattr(sink, "target", name)
        self.bound = Bound(f"ledger_sink '{name}'", seconds)

    def start(self, run: RunRecord) -> None:
        """Record a new ``running`` run (bounded)."""
        self.bound.write("start", self.inner.start, run)

    def heartbeat(self, run: RunRecord) -> None:
        """Record that the run is alive (bounded)."""
        self.bound.write("heartbeat", self.inner.heartbeat, run)

    def finish(self, run: RunRecord) -> None:
        """Record the run's end (bounded)."""
        self.bound.write("finish", self.inner.finish, run)

    def __getattr__(self, attribute: str) -> Any:
        if attribute == "inner":  # not set yet (a copy being built): no recursion
            raise AttributeError(attribute)
        return getattr(self.inner, attribute)


class _BoundedReader(BoundedLedgerSink):
    """A bounded sink with the read side (the dead runs a run closes are read through it)."""

    inner: Any

    def read_runs(self, query: LedgerQuery) -> list[RunRecord] | None:
        """Newest-first runs matching ``query`` (bounded)."""
        return self.bound.read("read_runs", self.inner.read_runs, query)

    def read_run(self, ref: str) -> list[RunRecord]:
        """Every attempt of run ``ref`` (bounded)."""
        return self.bound.read("read_run", self.inner.read_run, ref)


def bounded_sink(name: str, sink: LedgerSink, seconds: float) -> BoundedLedgerSink:
    """``sink`` behind its bound, a reader when ``sink`` is one."""
    kind = _BoundedReader if isinstance(sink, RunReader) else BoundedLedgerSink
    return kind(name, sink, seconds)
