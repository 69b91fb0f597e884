"""Finish a checkpointed resource beside dlt's end of the extract step, not before it.

A clean finish marks the namespace's rows completed (the writer's last rows, an UPDATE, the
retention DELETE) and closes the session the manager opened itself: 10-20 ms of destination
work. After a resource's last page dlt still has tens of milliseconds of its own to do before
``pipeline.extract()`` returns (closing item files, committing the extract package, saving
state), so the finish runs in a thread beside that work (drivers release the GIL while they
wait on the database), and the end of the extract step waits for it: when ``extract()``
returns, the rows are completed and the connection is closed, as when the finish ran in place.

The end of the step is seen through dlt's tracking hooks (``dlt.pipeline.trace``'s
``TRACKING_MODULES``): :data:`HOOK` counts each pipeline's steps in progress and, when one
ends (normally or not), waits for that pipeline's finishes. A finish is handed off only while
the hook is registered and has seen a step of the active pipeline start; anywhere else (the
pipeline's runtime trace disabled, a resource iterated outside an extract step, the hook
installed mid-step or dlt's list replaced since) it runs in place.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable
from typing import Any

from dlt_ops.log import context_thread, get_logger
from dlt_ops.redact import redact

log = get_logger(__name__)

#: How long interpreter exit waits for a finish nobody waited for (a stuck destination).
EXIT_WAIT_S = 60.0


class _StepHook:
    """dlt's tracking interface: counts steps in progress, joins finishes at each step's end."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._steps: dict[int, int] = {}  # id(pipeline) -> steps in progress (run nests extract)
        self._pending: dict[int, list[threading.Thread]] = {}

    def on_start_trace(self, trace: Any, step: Any, pipeline: Any) -> None:
        pass

    def on_start_trace_step(self, trace: Any, step: Any, pipeline: Any) -> None:
        with self._lock:
            self._steps[id(pipeline)] = self._steps.get(id(pipeline), 0) + 1

    def on_end_trace_step(
        self, trace: Any, step: Any, pipeline: Any, step_info: Any, send_state: bool
    ) -> None:
        with self._lock:
            left = self._steps.get(id(pipeline), 0) - 1
            if left > 0:
                self._steps[id(pipeline)] = left
            else:
                self._steps.pop(id(pipeline), None)
        self.join(pipeline)

    def on_end_trace(self, trace: Any, pipeline: Any, send_state: bool) -> None:
        self.join(pipeline)

    def in_step(self, pipeline: Any) -> bool:
        """Whether a step of ``pipeline`` is in progress (so its end will join a hand-off)."""
        with self._lock:
            return id(pipeline) in self._steps

    def hand_off(self, pipeline: Any, work: Callable[[], None], name: str) -> None:
        """Run ``work`` in a thread that the end of ``pipeline``'s step waits for."""
        thread = context_thread(_logged, work, name, name=f"finish{name}")
        with self._lock:
            self._pending.setdefault(id(pipeline), []).append(thread)
        thread.start()

    def join(self, pipeline: Any) -> None:
        """Wait for every finish handed off for ``pipeline``."""
        with self._lock:
            threads = self._pending.pop(id(pipeline), [])
        for thread in threads:
            thread.join()

    def join_all(self, timeout: float | None = None) -> None:
        """Wait for every finish still running (interpreter exit)."""
        with self._lock:
            threads = [t for ts in self._pending.values() for t in ts]
            self._pending.clear()
        for thread in threads:
            thread.join(timeout)


def _logged(work: Callable[[], None], name: str) -> None:
    try:
        work()
    except Exception as exc:  # the rows are already committed; nothing to hand back to
        log.error(f"{name} Finishing the checkpoints failed: {redact(str(exc))}")


HOOK = _StepHook()
_installing = threading.Lock()
_exit_wait = False


def _tracking_modules() -> list[Any]:
    from dlt.pipeline import trace

    if trace.TRACKING_MODULES is None:  # dlt fills it when dlt.pipeline is imported
        trace.TRACKING_MODULES = []
    return trace.TRACKING_MODULES


def install() -> None:
    """Register :data:`HOOK` with dlt's tracking modules (again, if the list was replaced)."""
    global _exit_wait
    with _installing:
        modules = _tracking_modules()
        if HOOK not in modules:
            modules.append(HOOK)  # dlt calls its four hooks by name
        if not _exit_wait:
            atexit.register(HOOK.join_all, EXIT_WAIT_S)
            _exit_wait = True


def will_join(pipeline: Any) -> bool:
    """Whether the end of ``pipeline``'s current step will wait for a hand-off: the hook is
    registered now and saw that step start."""
    return HOOK in _tracking_modules() and HOOK.in_step(pipeline)
