"""One place that maps ``DltOpsError`` to a one-line message and the documented exit code."""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

from dlt_ops.errors import DltOpsError
from dlt_ops.redact import redact


class _Watched:
    """``sys.stdout``, remembering whether anything was written (a ``--json`` command that
    already printed its document must not get a second one)."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream, self.written = stream, False

    def write(self, text: str) -> int:
        self.written = self.written or bool(text)
        return self.stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def json_requested() -> bool:
    """``--json`` anywhere on the command line."""
    return "--json" in sys.argv[1:]


def debug_enabled() -> bool:
    """``--debug`` anywhere on the command line."""
    return "--debug" in sys.argv[1:]


@contextmanager
def handle_errors() -> Iterator[None]:
    """Print ``error: <message>`` (redacted) on stderr and exit with the error's code; with
    ``--json``, also ``{"error", "type", "exit_code"}`` on stdout when nothing else is there."""
    watched = _Watched(sys.stdout) if json_requested() else None
    if watched is not None:
        sys.stdout = watched
    try:
        yield
    except DltOpsError as exc:
        if debug_enabled():
            sys.stderr.write(redact("".join(traceback.format_exception(exc))))
        message = redact(str(exc))
        sys.stderr.write(f"error: {message}\n")
        if watched is not None and not watched.written:  # scripts parse stdout: say it there too
            doc = {"error": message, "type": type(exc).__name__, "exit_code": exc.exit_code}
            watched.stream.write(json.dumps(doc) + "\n")
        raise SystemExit(exc.exit_code) from None
    except KeyboardInterrupt:
        # a Ctrl-C outside a command's own handling (typer turns most into exit 130 itself)
        sys.stderr.write("error: interrupted\n")
        raise SystemExit(130) from None
