"""Closing ledger rows whose run is known to be dead, so no row stays ``running`` forever.

A run killed by SIGKILL (or an OOM killer, or a destination that vanished before the finish
could be written) leaves its row ``running``. Two moments prove such a row dead:

* a later run of the same source on the **same host** finds the row's process gone — PIDs are
  only meaningful on the host that wrote them, so rows of other hosts are left to ``status``'s
  ``abandoned?`` (heartbeat) view;
* a later run **loads the dead run's pending load package**: the dead run can no longer be
  loading it;
* a backfill worker **reclaims the run's chunk** (its holder's lease expired or its process is
  gone, ``BackfillState.claim``): the chunk's earlier attempts, on any host, are dead.

The row is then finished as ``failed`` with an ``abandoned: ...`` reason naming what found it
— or, when its load had committed before it died, as ``completed`` with the rows it loaded and
a note naming the run that closed it: its data landed, and a sum over completed runs must count
it. The finish matches the row's own key (run id, source, start time) and status ``running``, so a
row that did end meanwhile is never overwritten. Best effort, like every ledger write.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Sequence
from datetime import datetime

from dlt_ops.clock import utcnow
from dlt_ops.ledger.model import ERROR_SUMMARY_MAX, RunRecord, RunStatus
from dlt_ops.ledger.sinks import LedgerQuery, LedgerSink, RunReader
from dlt_ops.liveness import pid_alive
from dlt_ops.log import get_logger
from dlt_ops.redact import redact

log = get_logger(__name__)

#: How many of a source's newest ``running`` rows are examined at the start of a run.
SCAN_LIMIT = 200


def dead_on_this_host(record: RunRecord, *, host: str | None = None) -> bool:
    """A ``running`` row written on this host by a process that no longer exists."""
    here = host or socket.gethostname()
    return (
        record.status == RunStatus.running
        and record.host == here
        and record.pid is not None
        and record.pid != os.getpid()
        and not pid_alive(record.pid)
    )


def close_rows(
    sinks: Sequence[tuple[str, LedgerSink]],
    rows: Callable[[RunReader], list[RunRecord]],
    reason: Callable[[RunRecord], str],
    landed: Callable[[RunRecord], int | None] | None = None,
) -> list[RunRecord]:
    """Finish, as ``failed``, the ``running`` rows each readable sink returns for ``rows``.

    ``landed(row)`` says how many rows the dead run did load (its load committed, then it
    died before its row said so); such a row is finished ``completed`` with those rows booked
    on it. Returns the rows closed (each once, whichever sinks held it).
    """
    closed: dict[tuple[str, str, object], RunRecord] = {}
    booked: dict[str, int | None] = {}
    now = utcnow()
    for name, sink in sinks:
        if not isinstance(sink, RunReader):
            continue
        try:
            for record in rows(sink):
                if record.status != RunStatus.running:
                    continue
                if landed is not None and record.run_id not in booked:
                    booked[record.run_id] = landed(record)
                rows_in = booked.get(record.run_id)
                ended = _closed(record, reason(record), rows_in, now)
                sink.finish(ended)
                closed[(record.run_id, record.source_section, record.started_at)] = ended
        except Exception as exc:  # the ledger is observability: the run goes on
            log.error(
                f"Failed to close abandoned ledger rows in {sink.target} (non-fatal)",
                sink=name,
                error=redact(f"{type(exc).__name__}: {exc}"),
            )
    for record in closed.values():
        log.warning("ledger.abandoned_closed", run_id=record.run_id, reason=record.error_summary)
    return list(closed.values())


def _closed(record: RunRecord, why: str, rows_in: int | None, now: datetime) -> RunRecord:
    """The finished row: ``failed`` as abandoned, or ``completed`` when its load committed."""
    if rows_in is None:
        text = redact(f"abandoned: {why}")[:ERROR_SUMMARY_MAX]
        return record.replace(status=str(RunStatus.failed), completed_at=now, error_summary=text)
    note = redact(f"closed: {why}; its load had committed {rows_in} row(s), booked here")
    return record.replace(status=str(RunStatus.completed), completed_at=now,
                          records_loaded=rows_in, note=note[:ERROR_SUMMARY_MAX])  # fmt: skip


def close_dead_runs_of(
    sinks: Sequence[tuple[str, LedgerSink]],
    source: str,
    *,
    closed_by: str,
    landed: Callable[[RunRecord], int | None] | None = None,
) -> list[RunRecord]:
    """Close ``source``'s ``running`` rows whose process died on this host (``landed``: see
    :func:`close_rows`)."""
    host = socket.gethostname()

    def rows(reader: RunReader) -> list[RunRecord]:
        query = LedgerQuery(source=source, status=str(RunStatus.running), limit=SCAN_LIMIT)
        return [r for r in reader.read_runs(query) or [] if dead_on_this_host(r, host=host)]

    return close_rows(
        sinks,
        rows,
        lambda r: f"process {r.pid} on {r.host} is gone (found by run {closed_by})",
        landed,
    )


def close_runs_by_id(
    sinks: Sequence[tuple[str, LedgerSink]],
    reasons: dict[str, str],
    *,
    source: str,
) -> list[RunRecord]:
    """Close the ``running`` rows of ``source`` whose run id is a key of ``reasons``."""

    def rows(reader: RunReader) -> list[RunRecord]:
        out: list[RunRecord] = []
        for run_id in reasons:
            out += [r for r in reader.read_run(run_id) if r.run_id == run_id
                    and r.source_section == source]  # fmt: skip
        return out

    return close_rows(sinks, rows, lambda r: reasons[r.run_id])


def _earlier_attempt(record: RunRecord, attempt: RunRecord) -> bool:
    """``record`` is another attempt of ``attempt``'s run: same run id, source and backfill."""
    return (record.run_id, record.source_section, record.backfill_id) == (
        attempt.run_id, attempt.source_section, attempt.backfill_id,
    ) and record.started_at != attempt.started_at  # fmt: skip


def close_dead_attempts(
    sinks: Sequence[tuple[str, LedgerSink]],
    attempt: RunRecord,
    why: str,
    landed: Callable[[RunRecord], int | None] | None = None,
) -> list[RunRecord]:
    """Close the ``running`` rows of ``attempt``'s earlier attempts (a reclaimed backfill chunk:
    ``why`` is the claim's reason), naming the attempt that closed them (``landed``: see
    :func:`close_rows`)."""

    def rows(reader: RunReader) -> list[RunRecord]:
        return [r for r in reader.read_run(attempt.run_id) if _earlier_attempt(r, attempt)]

    started = f"{attempt.started_at:%Y-%m-%d %H:%M:%S} UTC"
    return close_rows(
        sinks, rows, lambda r: f"{why} (closed by run {attempt.run_id}, attempt of {started})",
        landed,
    )  # fmt: skip


def booked_by_earlier_attempts(
    sinks: Sequence[tuple[str, LedgerSink]], attempt: RunRecord
) -> int | None:
    """Rows booked on ``attempt``'s earlier ``completed`` attempts (their load committed: the
    run's work is done), from the first sink that can tell; ``None`` when none completed."""
    for name, sink in sinks:
        if not isinstance(sink, RunReader):
            continue
        try:
            done = [r for r in sink.read_run(attempt.run_id) if _earlier_attempt(r, attempt)
                    and r.status == RunStatus.completed]  # fmt: skip
        except Exception as exc:  # unknown: the caller goes on as if none completed
            log.warning("ledger.attempts_unreadable", sink=name, error=redact(str(exc))[:300])
            continue
        return sum(r.records_loaded or 0 for r in done) if done else None
    return None
