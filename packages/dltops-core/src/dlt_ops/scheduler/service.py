"""``dlt-ops scheduler run``: run what is due, once or in a loop, as ``y-scheduler``.

For each source with a schedule: is it due (``due.py``)? If so, take its run lease (a source
another run holds is skipped: that run is the one doing the work), ask "due?" again under the
lease — a scheduler on another machine may have run it between the two looks — and run it.
So two schedulers never run one source twice for one slot.

By default the run is the source's ordinary run (no window): its incremental cursor carries on
from its last load, so a missed slot is caught up by the next one. ``windowed`` bounds each run
to ``[end of the newest completed window (else the previous slot), slot)`` instead, through
every incremental of the source (each must take a window, as for ``--from/--to``).

With ``max_parallel > 1`` each run is a process of its own (``scheduler/isolated.py``). A run
that fails before its source's code ran (the destination unreachable, the module failing to
import in the run's process although it imports cleanly on its own, a child process that died
before writing a ledger row) is retried within the slot, at most :data:`RETRIES` more times.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING

from dlt_ops.clock import utcnow
from dlt_ops.config import ProjectConfig
from dlt_ops.errors import DltOpsError
from dlt_ops.log import get_logger
from dlt_ops.plugins import PluginRegistry
from dlt_ops.scheduler.attempt import Attempt, Tick, run_attempt, with_retries
from dlt_ops.scheduler.due import Due, all_due, schedule_of
from dlt_ops.scheduler.freshness_alerts import FreshnessWatch

if TYPE_CHECKING:
    from dlt_ops.project.model import Project

log = get_logger(__name__)

#: The loop looks again at least this often (a config change, a run started by hand).
MAX_SLEEP_S = 60.0


def scheduled_sources(config: ProjectConfig, project: Project | None = None) -> list[str]:
    """Sources with a schedule that can come due (discovered, not ``@manual``), by name
    (``project``: the discovered project, when the caller has it)."""
    project = project or _discover(config)
    return sorted(name for name in project.sources if schedule_of(config, name) is not None)


def watched_sources(config: ProjectConfig, project: Project | None = None) -> list[str]:
    """Sources the freshness watch looks at: those with a freshness SLA or a schedule."""
    project = project or _discover(config)
    return sorted(
        name
        for name in project.sources
        if config.source(name).freshness is not None or schedule_of(config, name) is not None
    )


def _discover(config: ProjectConfig) -> Project:
    from dlt_ops.project.discovery import discover

    return discover(config.root)


def run_due(
    registry: PluginRegistry,
    config: ProjectConfig,
    *,
    now: datetime | None = None,
    max_parallel: int = 1,
    windowed: bool = False,
    watch: FreshnessWatch | None = None,
    interruptible: bool = True,
) -> list[Tick]:
    """One pass: run every source due at ``now``; at most ``max_parallel`` at a time, each in a
    process of its own when more than one. Then alert what the freshness watch finds changed
    (``watch`` carries what was sent from pass to pass; a new one reads it back from the
    destination). ``interruptible=False`` (the loop): Ctrl-C does not reach the child runs."""
    from contextlib import ExitStack

    from dlt_ops.target import resolving_once

    now = now or utcnow()
    project = _discover(config)  # once a pass: a fleet's scan is read from its cache file
    with ExitStack() as deciding:  # each source's target resolved once while nothing runs
        deciding.enter_context(resolving_once())
        dues = [d for d in all_due(registry, config, scheduled_sources(config, project), now) if d]
        for d in dues:
            last = d.last_started.isoformat() if d.last_started else None
            log.info("scheduler.due", source=d.source, schedule=d.schedule,
                     slot=d.slot.isoformat(), last_started=last)  # fmt: skip
        if dues:  # a run resolves its own target; the check after it resolves afresh
            deciding.close()
        if max_parallel <= 1 or len(dues) <= 1:  # in this thread: Ctrl-C reaches the run
            ticks = [with_retries(d, partial(run_attempt, registry, config, d, now, windowed))
                     for d in dues]  # fmt: skip
        else:
            ticks = _run_isolated(registry, config, dues, now, windowed, max_parallel,
                                  interruptible)  # fmt: skip
        # after the runs: a source this pass ran is judged on that run
        with resolving_once():
            watch = watch or FreshnessWatch()
            watch.check(registry, config, watched_sources(config, project), now)
    return ticks


def _run_isolated(
    registry: PluginRegistry,
    config: ProjectConfig,
    dues: list[Due],
    now: datetime,
    windowed: bool,
    max_parallel: int,
    interruptible: bool,
) -> list[Tick]:
    """Every due source in a child process of the fork server, ``max_parallel`` at a time."""
    from dlt_ops.destinations import resolve_destination
    from dlt_ops.isolation import adapter_modules, run_context
    from dlt_ops.scheduler.isolated import attempt_in_process, job_for, lanes_of
    from dlt_ops.target.sessions import map_by_database

    engines = set()
    for d in dues:
        try:
            engines.add(resolve_destination(config, d.source, None).engine)
        except DltOpsError:  # the run reports it
            continue
    ctx = run_context(engines, adapter_modules(registry, engines))

    def one(k: int) -> Tick:
        def attempt(run_id: str, retry_of: str | None) -> Attempt:
            job = job_for(config, dues[k], now, windowed, run_id=run_id, retry_of=retry_of,
                          interruptible=interruptible)  # fmt: skip
            return attempt_in_process(ctx, registry, config, job)

        return with_retries(dues[k], attempt)

    return map_by_database(lanes_of(registry, config, dues), one, width=max_parallel)


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
                        watch=watch, interruptible=False)  # fmt: skip
        for tick in ticks:
            report(tick)
        if stop.wait(next_wake(config, utcnow())):
            break
