"""The current run, visible to code that executes inside it (checkpoints, gates, observers).

The runner sets it for the whole extract/normalize/load; ``current_run()`` returns ``None``
outside a dlt-ops run (e.g. a plain ``pipeline.run`` in a notebook).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from dlt_ops.runner.model import RunContext

__all__ = ["RunContext", "active_run", "current_run"]


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
