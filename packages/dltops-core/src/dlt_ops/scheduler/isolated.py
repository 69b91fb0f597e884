"""``--max-parallel N``: each due source runs in a process of its own (``dlt_ops.isolation``).

The parent decides what is due, then runs up to N sources at a time, each attempt in a child
forked from the fork server (dlt already imported, nothing of the parent's threads or
connections). Sources whose database takes one writer at a time (an embedded file) share a
*lane* and run one after another; every other source is its own lane. The child takes the
source's lease, asks "due?" again under it, runs, and sends back what it came to; a child that
dies without a word is reported as such (and retried when it wrote no ledger row: its source
never ran).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dlt_ops.log import LogFormat, get_logger

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext

    from dlt_ops.config import ProjectConfig
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.scheduler.attempt import Attempt
    from dlt_ops.scheduler.due import Due

log = get_logger(__name__)


@dataclass(frozen=True)
class Job:
    """What a child needs for one attempt (pickled to it)."""

    root: str
    due: Due
    now: datetime
    windowed: bool
    run_id: str
    retry_of: str | None
    env: dict[str, str]
    log_format: LogFormat
    log_level: int
    #: ``False`` in the loop: Ctrl-C stops the scheduler, the runs in flight finish.
    interruptible: bool


def _child(job: Job, conn: Any) -> None:
    """In the child: one attempt of one due source; its outcome goes back over ``conn``."""
    from dlt_ops.config import load_project_config
    from dlt_ops.destinations import project_registry
    from dlt_ops.errors import DltOpsError
    from dlt_ops.isolation import adopt_environment
    from dlt_ops.log import configure_like
    from dlt_ops.scheduler.attempt import Attempt, Tick, run_attempt

    adopt_environment(job.env)
    if not job.interruptible:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    configure_like(job.log_format, job.log_level)
    try:
        config = load_project_config(Path(job.root))
        registry = project_registry(config)
    except DltOpsError as exc:  # the project changed under the scheduler: not worth a retry
        result = Attempt(Tick(job.due.source, job.due.slot, error=str(exc)))
    else:
        result = run_attempt(registry, config, job.due, job.now, job.windowed,
                             run_id=job.run_id, retry_of=job.retry_of)  # fmt: skip
    try:
        conn.send(result)
    except (BrokenPipeError, OSError):  # the scheduler is gone: nobody to tell
        pass
    conn.close()


def attempt_in_process(
    ctx: BaseContext,
    registry: PluginRegistry,
    config: ProjectConfig,
    job: Job,
) -> Attempt:
    """Start one child for ``job`` and wait for what it came to."""
    from dlt_ops.isolation import start
    from dlt_ops.scheduler.attempt import Attempt, Tick

    reader, writer = ctx.Pipe(duplex=False)
    proc = ctx.Process(  # type: ignore[attr-defined]
        target=_child, args=(job, writer), name=f"y-scheduler {job.due.source}", daemon=False
    )
    start(proc)
    writer.close()  # the child holds the only writer now: EOF when it exits
    try:
        result: Attempt | None = reader.recv()
    except EOFError:
        result = None
    finally:
        reader.close()
    proc.join()
    if result is not None:
        return result
    d = job.due
    recorded = _recorded(registry, config, d.source, job.run_id)
    error = f"the run's process exited with code {proc.exitcode} before it reported an outcome" + (
        " (its ledger row is closed by the source's next run)" if recorded else ""
    )
    log.error("scheduler.process_died", source=d.source, exitcode=proc.exitcode,
              run_id=job.run_id, recorded=recorded)  # fmt: skip
    tick = Tick(d.source, d.slot, run_id=job.run_id if recorded else None,
                status="failed" if recorded else None, error=error)  # fmt: skip
    return Attempt(tick, retry=not recorded)  # nothing recorded: the source never ran


def _recorded(registry: PluginRegistry, config: ProjectConfig, source: str, run_id: str) -> bool:
    """Whether the ledger has a row of ``run_id`` (a dead child got that far)."""
    from dlt_ops.scheduler.due import recent_runs

    try:
        return any(r.run_id == run_id for r in recent_runs(registry, config, source))
    except Exception:  # unreadable: assume it ran (never run a source twice for a slot)
        return True


def lanes_of(
    registry: PluginRegistry, config: ProjectConfig, dues: Sequence[Due]
) -> list[Hashable]:
    """One lane per due source, except that sources writing one single-writer database
    (an embedded file) share its lane."""
    from dlt_ops.target import resolve_target

    lanes: list[Hashable] = []
    for k, d in enumerate(dues):
        try:
            target = resolve_target(registry, config, d.source)
        except Exception:  # the run reports it
            lanes.append(("own", k))
            continue
        lanes.append((target.engine, target.database) if target.single_writer else ("own", k))
    return lanes


def job_for(
    config: ProjectConfig,
    d: Due,
    now: datetime,
    windowed: bool,
    *,
    run_id: str,
    retry_of: str | None,
    interruptible: bool,
) -> Job:
    """The :class:`Job` of one attempt, with this process's environment and logging."""
    from dlt_ops.log import current_format

    fmt, level = current_format()
    return Job(root=str(config.root), due=d, now=now, windowed=windowed, run_id=run_id,
               retry_of=retry_of, env=dict(os.environ), log_format=fmt, log_level=level,
               interruptible=interruptible)  # fmt: skip
