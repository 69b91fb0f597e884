"""The current run, visible to code that executes inside it (checkpoints, gates, observers).

The runner sets it for the whole extract/normalize/load; ``current_run()`` returns ``None``
outside a dlt-ops run (e.g. a plain ``pipeline.run`` in a notebook).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dlt_ops.runner.model import RunState

if TYPE_CHECKING:
    from dlt_ops.adapters import DestinationSession
    from dlt_ops.config import ProjectConfig
    from dlt_ops.destinations import ResolvedDestination
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.runner.window import Window


@dataclass
class RunContext:
    """One run's identity and services."""

    run_id: str
    source: str
    resources: tuple[str, ...]
    window: Window | None
    config: ProjectConfig
    registry: PluginRegistry
    where: ResolvedDestination
    full_tier: bool
    #: Opens (once) and returns the run's destination session; raises on core tier.
    open_session: Callable[[], DestinationSession]
    backfill_id: str | None = None
    #: How far the run got and what it built (phase, dlt pipeline, tables, gates).
    state: RunState = field(default_factory=RunState)

    @property
    def pipeline_name(self) -> str:
        """dlt pipeline name of the run."""
        return self.where.pipeline_name


_CURRENT: ContextVar[RunContext | None] = ContextVar("dlt_ops_current_run", default=None)


def current_run() -> RunContext | None:
    """The run executing in this context, if any."""
    return _CURRENT.get()


@contextmanager
def active_run(ctx: RunContext) -> Iterator[RunContext]:
    """Make ``ctx`` the current run for the enclosed block."""
    token = _CURRENT.set(ctx)
    try:
        yield ctx
    finally:
        _CURRENT.reset(token)
