"""Leave the process once a command is done, without the interpreter's teardown.

A command that ran a source has dlt and its dependencies loaded, well over a thousand modules.
Python's teardown clears every one of them and collects the garbage a last time: ~0.2 s on this
kind of machine, a sixth of a small ``pipeline run``, spent on nothing a finished command needs.
:func:`leave` does the parts of a normal exit that matter (the ``atexit`` callbacks: logging's
flush, coverage's data file, temporary directories' cleanup; then flushing stdout and stderr)
and ends the process with ``os._exit``.

It steps aside, and the caller exits the normal way, when a normal exit would do more than that:
while another non-daemon thread still runs (a normal exit waits for it), in Python's development
mode (``-X dev``, whose teardown reports unclosed resources), or when this interpreter does not
expose its ``atexit`` runner.
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
    run_exit_callbacks = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_callbacks is None or sys.flags.dev_mode or _other_threads_running():
        return
    run_exit_callbacks()
    if not _flushed(sys.stdout, sys.__stdout__) and code == 0:
        code = FLUSH_FAILED
    _flushed(sys.stderr, sys.__stderr__)
    os._exit(code)


def _other_threads_running() -> bool:
    main = threading.main_thread()
    return any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate())


def _flushed(*streams: object) -> bool:
    ok = True
    for stream in dict.fromkeys(s for s in streams if s is not None):
        try:
            stream.flush()  # type: ignore[attr-defined]
        except (OSError, ValueError):  # a closed pipe or stream: as at a normal exit
            ok = False
    return ok
