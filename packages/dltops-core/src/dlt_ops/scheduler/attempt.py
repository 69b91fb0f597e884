"""One start of one due source (:func:`run_attempt`), and the retries of a start that failed
before the source's code ran (:func:`with_retries`).

Such a failure is an infrastructure one: the destination could not be reached, the source's
module failed to import in the run's process although it imports cleanly on its own
(``SourceImportEnvironmentError``: the import-safety check imported it), or the run's process
died before it wrote a ledger row. Trying again cannot run the source twice, so it is tried
again within the slot, at most :data:`RETRIES` more times, in a fresh process when runs are
isolated. Any other failure (the source raised, a load failed) is the slot's run.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import NamedTuple

from dlt_ops.config import ProjectConfig
from dlt_ops.errors import DestinationUnreachableError, DltOpsError, SourceImportEnvironmentError
from dlt_ops.log import get_logger
from dlt_ops.plugins import PluginRegistry
from dlt_ops.scheduler.due import Due, due, recent_runs

log = get_logger(__name__)

TRIGGER_SOURCE = "y-scheduler"
#: A run that failed before its source's code ran is tried again at most this many times
#: within its slot, after these pauses (seconds).
RETRIES = 2
RETRY_PAUSES_S = (1.0, 5.0)


@dataclass(frozen=True)
class Tick:
    """What one source came to in one pass: ran (``record``), or why not (``skipped``)."""

    source: str
    slot: datetime
    run_id: str | None = None
    status: str | None = None
    skipped: str | None = None
    error: str | None = None
    #: How many times the source was started for this slot (retries: see :data:`RETRIES`).
    attempts: int = 1

    @property
    def ok(self) -> bool:
        """The source ran and completed, or was rightly skipped."""
        return self.error is None and self.status in (None, "completed")


class Attempt(NamedTuple):
    """One start of a due source: what it came to, and whether it failed before the source's
    code ran (so trying again within the slot is safe)."""

    tick: Tick
    retry: bool = False


def with_retries(d: Due, attempt: Callable[[str, str | None], Attempt]) -> Tick:
    """``attempt(run_id, retry_of)`` until it does not ask for a retry, at most
    ``1 + RETRIES`` times; ``retry_of`` is the run id of the failed attempt before (if it
    wrote a ledger row), so the retry still finds the source due."""
    retry_of: str | None = None
    for k in range(RETRIES + 1):
        result = attempt(uuid.uuid4().hex, retry_of)
        if not result.retry or k == RETRIES:
            return replace(result.tick, attempts=k + 1)
        log.warning("scheduler.retrying", source=d.source, slot=d.slot.isoformat(),
                    attempt=k + 1, error=result.tick.error)  # fmt: skip
        retry_of = result.tick.run_id or retry_of  # the newest row this slot wrote
        time.sleep(RETRY_PAUSES_S[k])
    raise AssertionError("unreachable")  # pragma: no cover


def _before_source(exc: BaseException | None) -> bool:
    """A failure that happened before the source's code ran: retrying it is safe."""
    return isinstance(exc, (SourceImportEnvironmentError, DestinationUnreachableError))


def _still_due(
    registry: PluginRegistry, config: ProjectConfig, d: Due, now: datetime, retry_of: str | None
) -> bool:
    """Due at ``now`` under the lease, or the newest run is this slot's own failed attempt."""
    if due(registry, config, d.source, now) is not None:
        return True
    if retry_of is None:
        return False
    runs = recent_runs(registry, config, d.source)
    return bool(runs) and runs[0].run_id == retry_of


def run_attempt(
    registry: PluginRegistry,
    config: ProjectConfig,
    d: Due,
    now: datetime,
    windowed: bool,
    run_id: str,
    retry_of: str | None = None,
) -> Attempt:
    """Start ``d`` once: take its lease, check it is still due, run it."""
    from dlt_ops.runner.lease import LeaseBusyError, source_lease
    from dlt_ops.runner.model import RunRequest
    from dlt_ops.runner.run import execute_run, prepare_for
    from dlt_ops.runner.window import Window

    window = Window(d.interval_start, d.slot) if windowed and d.interval_start else None
    request = RunRequest(source=d.source, trigger_source=TRIGGER_SOURCE, run_id=run_id,
                         window=window, lease_held=True)  # fmt: skip
    try:
        prepared = prepare_for(registry, config, request)
        with source_lease(registry, config, prepared.target, source=d.source, run_id=run_id,
                          trigger=TRIGGER_SOURCE):  # fmt: skip
            if not _still_due(registry, config, d, now, retry_of):  # ran meanwhile (elsewhere)
                log.info("scheduler.ran_meanwhile", source=d.source, slot=d.slot.isoformat())
                return Attempt(Tick(d.source, d.slot, skipped="another run took this slot"))
            outcome = execute_run(registry, config, request, prepared=prepared)
    except LeaseBusyError as exc:
        log.info("scheduler.busy", source=d.source, reason=str(exc))
        return Attempt(Tick(d.source, d.slot, skipped=str(exc)))
    except DltOpsError as exc:  # refused before a row (config, unknown resource...)
        log.error("scheduler.refused", source=d.source, error=str(exc))
        return Attempt(Tick(d.source, d.slot, error=str(exc)), retry=_before_source(exc))
    record = outcome.record
    tick = Tick(d.source, d.slot, run_id=record.run_id, status=record.status,
                error=record.error_summary if not outcome.ok else None)  # fmt: skip
    return Attempt(tick, retry=not outcome.ok and _before_source(outcome.error))
