"""The ledger-sink contract: what a sink receives and how ``status`` reads one back.

A sink must implement :class:`LedgerSink` (the write side). The read side is optional and
split by command, so a sink implements exactly what it can answer: :class:`RunReader`
(``status``, ``runs list|show``, ``backfill show``) and :class:`LedgerPruner` (``runs prune``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from dlt_ops.ledger.model import RunRecord
from dlt_ops.plugins.kinds import Kind

if TYPE_CHECKING:
    from dlt_ops.adapters import DestinationSession


@dataclass(frozen=True)
class LedgerQuery:
    """What ``status`` asks a ledger for: one source's newest runs, optionally filtered."""

    source: str
    resource: str | None = None
    status: str | None = None
    since: datetime | None = None
    limit: int = 10


@dataclass
class LedgerSinkContext:
    """Everything a sink factory may use. ``open_session`` opens (once) the destination session;
    it raises when the destination is unreachable or has no adapter (``full_tier`` False)."""

    name: str
    project_root: Path
    engine: str
    dataset: str
    full_tier: bool
    open_session: Callable[[], DestinationSession]
    options: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class LedgerSink(Protocol):
    """Receives a run's record when it starts, on each heartbeat, and when it finishes."""

    #: Human label for log lines: the table or file the sink writes to.
    target: str

    def start(self, run: RunRecord) -> None:
        """Record a new ``running`` run."""

    def heartbeat(self, run: RunRecord) -> None:
        """Record that the run is still alive (``run.heartbeat_at``)."""

    def finish(self, run: RunRecord) -> None:
        """Record the run's terminal status and counts."""


@runtime_checkable
class RunReader(Protocol):
    """The read side ``status`` and ``runs list|show`` use."""

    def read_runs(self, query: LedgerQuery) -> list[RunRecord] | None:
        """Newest-first runs matching ``query``; ``None`` when no ledger exists yet."""

    def read_run(self, ref: str) -> list[RunRecord]:
        """Every attempt (one record per ``started_at``) of the run whose id is or starts with
        ``ref``, newest first; ``[]`` when there is none."""


@runtime_checkable
class LedgerPruner(Protocol):
    """What ``runs prune`` calls."""

    def prune(self, older_than: datetime, *, dry_run: bool) -> int:
        """Delete (or count, with ``dry_run``) runs started before ``older_than``; return the
        number of runs."""


#: A ledger-sink factory: what ``dlt_ops_register_ledger_sinks`` registers.
LedgerSinkFactory = Callable[[LedgerSinkContext], LedgerSink]
#: The typed key: ``registry.get(LEDGER_SINK, name)`` is a :data:`LedgerSinkFactory`.
LEDGER_SINK: Kind[LedgerSinkFactory] = Kind("ledger_sink", LedgerSinkFactory)


@runtime_checkable
class ReadableLedgerSink(LedgerSink, Protocol):
    """A sink ``status`` can read back from."""

    def read_runs(self, query: LedgerQuery) -> list[RunRecord] | None:
        """Newest-first runs matching ``query``; ``None`` when no ledger exists yet."""

    def prune(self, older_than: datetime, *, dry_run: bool) -> int:
        """Delete (or count, with ``dry_run``) runs started before ``older_than``."""
