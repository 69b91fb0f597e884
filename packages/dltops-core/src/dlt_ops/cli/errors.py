"""One place that maps ``DltOpsError`` to a one-line message and the documented exit code."""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterator
from contextlib import contextmanager

from dlt_ops.errors import DltOpsError
from dlt_ops.redact import redact


def debug_enabled() -> bool:
    """``--debug`` anywhere on the command line."""
    return "--debug" in sys.argv[1:]


@contextmanager
def handle_errors() -> Iterator[None]:
    """Print ``error: <message>`` (redacted) on stderr and exit with the error's code."""
    try:
        yield
    except DltOpsError as exc:
        if debug_enabled():
            sys.stderr.write(redact("".join(traceback.format_exception(exc))))
        sys.stderr.write(f"error: {redact(str(exc))}\n")
        raise SystemExit(exc.exit_code) from None
    except KeyboardInterrupt:
        # a Ctrl-C outside a command's own handling (typer turns most into exit 130 itself)
        sys.stderr.write("error: interrupted\n")
        raise SystemExit(130) from None
