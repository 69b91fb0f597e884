"""``dlt-ops scheduler run``: run what is due, once or in a loop, as ``y-scheduler``.

For each source with a schedule: is it due (``due.py``)? If so, take its run lease (a source
another run holds is skipped: that run is the one doing the work), ask "due?" again under the
lease — a scheduler on another machine may have run it between the two looks — and run it.
So two schedulers never run one source twice for one slot.

By default the run is the source's ordinary run (no window): its incremental cursor carries on
from its last load, so a missed slot is caught up by the next one. ``windowed`` bounds each run
to ``[end of the newest completed window (else the previous slot), slot)`` instead, through
every incremental of the source (each must take a window, as for ``--from/--to``).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime

from dlt_ops.clock import utcnow
from dlt_ops.config import ProjectConfig
from dlt_ops.errors import DltOpsError
from dlt_ops.log import get_logger
from dlt_ops.plugins import PluginRegistry
from dlt_ops.scheduler.due import Due, all_due, due, schedule_of
from dlt_ops.scheduler.freshness_alerts import FreshnessWatch

log = get_logger(__name__)

TRIGGER_SOURCE = "y-scheduler"
#: The loop looks again at least this often (a config change, a run started by hand).
MAX_SLEEP_S = 60.0


@dataclass(frozen=True)
class Tick:
    """What one source came to in one pass: ran (``record``), or why not (``skipped``)."""

    source: str
    slot: datetime
    run_id: str | None = None
    status: str | None = None
    skipped: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        """The source ran and completed, or was rightly skipped."""
        return self.error is None and self.status in (None, "completed")


def scheduled_sources(config: ProjectConfig) -> list[str]:
    """Sources with a schedule that can come due (discovered, not ``@manual``), by name."""
    from dlt_ops.project.discovery import discover

    project = discover(config.root)
    return sorted(name for name in project.sources if schedule_of(config, name) is not None)


def watched_sources(config: ProjectConfig) -> list[str]:
    """Sources the freshness watch looks at: those with a freshness SLA or a schedule."""
    from dlt_ops.project.discovery import discover

    project = discover(config.root)
    return sorted(
        name
        for name in project.sources
        if config.source(name).freshness is not None or schedule_of(config, name) is not None
    )


def run_due(
    registry: PluginRegistry,
    config: ProjectConfig,
    *,
    now: datetime | None = None,
    max_parallel: int = 1,
    windowed: bool = False,
    watch: FreshnessWatch | None = None,
) -> list[Tick]:
    """One pass: run every source due at ``now``; at most ``max_parallel`` at a time. Then
    alert what the freshness watch finds changed (``watch`` carries what was sent from pass
    to pass; a new one reads it back from the destination)."""
    now = now or utcnow()
    dues = [d for d in all_due(registry, config, scheduled_sources(config), now) if d]
    for d in dues:
        log.info("scheduler.due", source=d.source, schedule=d.schedule, slot=d.slot.isoformat(),
                 last_started=d.last_started.isoformat() if d.last_started else None)  # fmt: skip
    if max_parallel <= 1 or len(dues) <= 1:  # in this thread: Ctrl-C reaches the run
        ticks = [_run_one(registry, config, d, now, windowed) for d in dues]
    else:
        with ThreadPoolExecutor(max_workers=max_parallel, thread_name_prefix="y-scheduler") as pool:
            ticks = list(pool.map(lambda d: _run_one(registry, config, d, now, windowed), dues))
    # after the runs: a source this pass ran is judged on that run
    (watch or FreshnessWatch()).check(registry, config, watched_sources(config), now)
    return ticks


def _run_one(
    registry: PluginRegistry, config: ProjectConfig, d: Due, now: datetime, windowed: bool
) -> Tick:
    from dlt_ops.runner.lease import LeaseBusyError, source_lease
    from dlt_ops.runner.model import RunRequest
    from dlt_ops.runner.run import execute_run, prepare_for
    from dlt_ops.runner.window import Window

    run_id = uuid.uuid4().hex
    window = Window(d.interval_start, d.slot) if windowed and d.interval_start else None
    request = RunRequest(source=d.source, trigger_source=TRIGGER_SOURCE, run_id=run_id,
                         window=window, lease_held=True)  # fmt: skip
    try:
        prepared = prepare_for(registry, config, request)
        with source_lease(registry, config, prepared.target, source=d.source, run_id=run_id,
                          trigger=TRIGGER_SOURCE):  # fmt: skip
            if due(registry, config, d.source, now) is None:  # ran meanwhile (another host)
                log.info("scheduler.ran_meanwhile", source=d.source, slot=d.slot.isoformat())
                return Tick(d.source, d.slot, skipped="another run took this slot")
            outcome = execute_run(registry, config, request, prepared=prepared)
    except LeaseBusyError as exc:
        log.info("scheduler.busy", source=d.source, reason=str(exc))
        return Tick(d.source, d.slot, skipped=str(exc))
    except DltOpsError as exc:  # refused before a row (config, unknown resource...)
        log.error("scheduler.refused", source=d.source, error=str(exc))
        return Tick(d.source, d.slot, error=str(exc))
    record = outcome.record
    return Tick(d.source, d.slot, run_id=record.run_id, status=record.status,
                error=record.error_summary if not outcome.ok else None)  # fmt: skip


def next_wake(config: ProjectConfig, now: datetime) -> float:
    """Seconds until the next slot of any scheduled source (at most ``MAX_SLEEP_S``)."""
    times = [
        fire
        for s in scheduled_sources(config)
        if (cron := schedule_of(config, s)) is not None and (fire := cron.next(now)) is not None
    ]
    if not times:
        return MAX_SLEEP_S
    return max(0.0, min(MAX_SLEEP_S, (min(times) - now).total_seconds()))


def serve(
    registry: PluginRegistry,
    config: ProjectConfig,
    *,
    stop: threading.Event,
    max_parallel: int = 1,
    windowed: bool = False,
    report: Callable[[Tick], None] = lambda tick: None,
) -> None:
    """Pass after pass until ``stop`` is set; a pass in flight finishes its runs first."""
    watch = FreshnessWatch()  # what was alerted, carried from pass to pass
    while not stop.is_set():
        ticks = run_due(registry, config, max_parallel=max_parallel, windowed=windowed,
                        watch=watch)  # fmt: skip
        for tick in ticks:
            report(tick)
        if stop.wait(next_wake(config, utcnow())):
            break
