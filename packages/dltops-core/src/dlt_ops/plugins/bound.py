"""A time bound on every call the core makes into a sink plugin (ledger and alert sinks).

Each bounded plugin object gets one worker thread that makes its calls, one at a time and in
the order they were asked for: a row's start can never land after its finish. The caller waits
at most the sink's bound (``call_timeout_s`` in the sink's options table, default
:data:`DEFAULT_S`) and then goes on: the call raises :class:`~dlt_ops.errors.PluginTimeoutError`
and the sink is logged as timed out. The slow call keeps running on the worker; while it does,
the sink is *behind*: later writes queue behind it without being waited for (the run is held up
at most one bound per stuck sink, not one per call) and reads fail at once. A sink that catches
up is waited for again. The worker is a daemon thread: a sink that never returns never holds
the process open either, and writes still queued when the process ends are lost.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from dlt_ops.errors import ConfigError, PluginTimeoutError
from dlt_ops.log import context_thread, get_logger

log = get_logger(__name__)

T = TypeVar("T")

#: The option every sink's table takes: seconds one call may take.
OPTION = "call_timeout_s"
#: The bound when a sink's table does not set one.
DEFAULT_S = 30.0
#: The largest bound a table may set.
MOST_S = 600.0
#: A worker with nothing to do for this long ends: a backfill builds its sinks once per chunk,
#: and an idle thread per sink and chunk would pile up in a long process.
IDLE_EXIT_S = 2.0


def bounded_option(
    options: Mapping[str, Any], key: str, default: float, most: float, *, table: str
) -> float:
    """``options[key]``, a number from 0 to ``most`` (``default`` when absent); anything else is
    a ``ConfigError`` naming ``table`` and the key (exit 2)."""
    value = options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= most:
        raise ConfigError(f"{table} {key} must be a number from 0 to {most:g}, got {value!r}.")
    return float(value)


def call_timeout(options: Mapping[str, Any], *, table: str) -> float:
    """The sink's bound from its options table: ``call_timeout_s``, more than 0 (0 would time
    every call out) and at most :data:`MOST_S`."""
    seconds = bounded_option(options, OPTION, DEFAULT_S, MOST_S, table=table)
    if seconds <= 0:
        raise ConfigError(f"{table} {OPTION} must be more than 0, got {seconds:g}.")
    return seconds


def sink_call_timeout(tables: Mapping[str, Any], kind: str, name: str) -> float:
    """Sink ``name``'s bound from ``tables`` (``[dlt_ops.<kind>]``: one options table per
    sink): ``[dlt_ops.<kind>.<name>] call_timeout_s``, or a ``ConfigError``."""
    options = tables.get(name, {})
    return call_timeout(
        options if isinstance(options, dict) else {}, table=f"[dlt_ops.{kind}.{name}]"
    )


class _Call:
    __slots__ = ("args", "done", "error", "fn", "value")

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.fn, self.args = fn, args
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.value = self.fn(*self.args)
        except BaseException as exc:  # handed to the caller, who decides what it means
            self.error = exc
        finally:
            self.done.set()


class Bound:
    """The calls into one plugin object, made on its own worker, each waited for at most
    ``seconds``. ``plugin`` names it in log lines and errors (``ledger_sink 'jsonl'``)."""

    def __init__(self, plugin: str, seconds: float) -> None:
        self.plugin, self.seconds = plugin, seconds
        self._queue: queue.SimpleQueue[_Call] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None
        self._pending = 0  # calls queued or running
        self._behind = False  # a call timed out and the worker has not caught up since
        self._idle = threading.Event()  # nothing queued or running
        self._idle.set()

    def write(self, call: str, fn: Callable[..., None], *args: Any) -> None:
        """Make a call whose result nobody needs: queued even while the sink is behind."""
        self._call(call, fn, args, queue_when_behind=True)

    def read(self, call: str, fn: Callable[..., T], *args: Any) -> T:
        """Make a call and return its result (a read): refused at once while behind."""
        return self._call(call, fn, args, queue_when_behind=False)  # type: ignore[no-any-return]

    def _call(
        self, call: str, fn: Callable[..., Any], args: tuple[Any, ...], *, queue_when_behind: bool
    ) -> Any:
        job = _Call(fn, args)
        with self._lock:
            behind = self._behind
            if not behind or queue_when_behind:
                self._submit(job)
        if behind:
            log.warning("plugin.behind", plugin=self.plugin, call=call, queued=queue_when_behind)
            raise PluginTimeoutError(self.plugin, call, self.seconds, behind=True)
        if not job.done.wait(self.seconds):
            with self._lock:
                self._behind = self._pending > 0
            log.error("plugin.timed_out", plugin=self.plugin, call=call, timeout_s=self.seconds)
            raise PluginTimeoutError(self.plugin, call, self.seconds)
        if job.error is not None:
            raise job.error
        return job.value

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every call asked for so far has returned, at most ``timeout`` seconds."""
        return self._idle.wait(timeout)

    def _submit(self, job: _Call) -> None:  # under the lock
        self._pending += 1
        self._idle.clear()
        self._queue.put(job)
        if self._worker is None:
            self._worker = context_thread(self._drain, name=f"dlt-ops-bound-{self.plugin}")
            self._worker.start()

    def _drain(self) -> None:
        while True:
            try:
                job = self._queue.get(timeout=IDLE_EXIT_S)
            except queue.Empty:
                with self._lock:  # nothing asked for a while: end (the next call starts one)
                    if self._pending == 0:
                        self._worker = None
                        return
                continue
            job.run()
            with self._lock:
                self._pending -= 1
                if self._pending == 0:
                    self._behind = False
                    self._idle.set()
