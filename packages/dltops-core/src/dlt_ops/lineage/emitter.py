"""Sending events off the run's thread, within a bounded time.

One daemon thread per process and transport config drains a queue through openlineage-python's
client. ``send`` never blocks the run; ``flush`` (at a run's end) waits at most the configured
timeout for what is queued, then gives up with a warning: a lineage server that is slow or gone
costs a run at most ``[dlt_ops.lineage] timeout`` seconds and never changes its outcome. The
thread is a daemon, so an undelivered event never holds the process open either.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import TYPE_CHECKING, Any

from dlt_ops.log import get_logger
from dlt_ops.redact import redact

if TYPE_CHECKING:
    from openlineage.client import OpenLineageClient

    from dlt_ops.config.lineage import LineageConfig

log = get_logger(__name__)

_emitters: dict[LineageConfig, Emitter] = {}
_emitters_lock = threading.Lock()


def redact_event(obj: Any) -> Any:
    """Every string inside an event (attrs objects, lists, dicts) redacted, in place."""
    import attr

    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, list):
        obj[:] = [redact_event(v) for v in obj]
    elif isinstance(obj, dict):
        for key in list(obj):
            obj[key] = redact_event(obj[key])
    elif attr.has(type(obj)):
        for f in attr.fields(type(obj)):
            value = getattr(obj, f.name)
            new = redact_event(value)
            if new is not value:
                setattr(obj, f.name, new)
    return obj


class Emitter:
    """A queue and the thread that sends it through one transport."""

    def __init__(self, config: LineageConfig) -> None:
        self.config = config
        self._queue: queue.Queue[Any] = queue.Queue()
        self._client: OpenLineageClient | None = None
        self._thread = threading.Thread(target=self._drain, name="dlt-ops-lineage", daemon=True)
        self._thread.start()

    def _make_client(self) -> OpenLineageClient:
        from openlineage.client import OpenLineageClient
        from openlineage.client.transport import get_default_factory

        if self.config.path is not None:  # the file transport does not create its directory
            self.config.path.parent.mkdir(parents=True, exist_ok=True)
        transport = get_default_factory().create(self.config.transport_options())
        return OpenLineageClient(transport=transport)

    def _drain(self) -> None:
        while True:
            event = self._queue.get()
            try:
                if self._client is None:
                    self._client = self._make_client()
                self._client.emit(event)
                log.debug("lineage.sent", state=getattr(event.eventType, "value", None))
            except Exception as exc:  # lineage is observability: the run never hears of it
                log.warning(
                    "lineage.send_failed",
                    transport=self.config.transport,
                    error=redact(f"{type(exc).__name__}: {exc}"),
                )
            finally:
                self._queue.task_done()

    def send(self, event: Any) -> None:
        """Queue ``event`` (redacted now: a secret learnt later still cannot leak)."""
        self._queue.put(redact_event(event))

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued event was handled, at most ``timeout`` seconds (default:
        the configured one); ``False`` when some were still pending."""
        deadline = time.monotonic() + (self.config.timeout if timeout is None else timeout)
        with self._queue.all_tasks_done:
            while self._queue.unfinished_tasks:
                left = deadline - time.monotonic()
                if left <= 0:
                    log.warning(
                        "lineage.flush_timed_out",
                        pending=self._queue.unfinished_tasks,
                        timeout=self.config.timeout,
                    )
                    return False
                self._queue.all_tasks_done.wait(left)
        return True


def emitter_for(config: LineageConfig) -> Emitter:
    """The process's emitter for ``config`` (one thread per transport config)."""
    with _emitters_lock:
        emitter = _emitters.get(config)
        if emitter is None:
            emitter = _emitters[config] = Emitter(config)
        return emitter
