"""Leave the process once a command is done, without the interpreter's teardown.

A command that ran a source has dlt and its dependencies loaded, well over a thousand modules.
Python's teardown clears every one of them and collects the garbage a last time: ~0.2 s on this
kind of machine, a sixth of a small ``pipeline run``, spent on nothing a finished command needs.
:func:`leave` does the parts of a normal exit that matter (the ``atexit`` callbacks: logging's
flush, coverage's data file, temporary directories' cleanup; then flushing stdout and stderr)
and ends the process with ``os._exit``.

The steps are the interpreter's own, in its order: wait for the other non-daemon threads (which
also wakes idle thread pools and lets them finish, e.g. dlt's telemetry sender), run the
``atexit`` callbacks, flush the standard streams. It steps aside, and the caller exits the normal
way, in Python's development mode (``-X dev``, whose teardown reports unclosed resources), off the
main thread, or when this interpreter does not expose those two steps.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading

#: The interpreter's own exit status when stdout cannot be flushed at exit (a closed pipe).
FLUSH_FAILED = 120


def leave(code: int) -> None:
    """End the process now with ``code``, or return when a normal exit is needed."""
    # private, but exactly what the interpreter calls at exit before its teardown
    wait_for_threads = getattr(threading, "_shutdown", None)
    run_exit_callbacks = getattr(atexit, "_run_exitfuncs", None)
    if wait_for_threads is None or run_exit_callbacks is None or sys.flags.dev_mode:
        return
    if threading.current_thread() is not threading.main_thread():
        return
    wait_for_threads()
    run_exit_callbacks()
    if not _flushed(sys.stdout, sys.__stdout__) and code == 0:
        code = FLUSH_FAILED
    _flushed(sys.stderr, sys.__stderr__)
    os._exit(code)


def _flushed(*streams: object) -> bool:
    ok = True
    for stream in dict.fromkeys(s for s in streams if s is not None):
        try:
            stream.flush()  # type: ignore[attr-defined]
        except (OSError, ValueError):  # a closed pipe or stream: as at a normal exit
            ok = False
    return ok
