"""The ``dlt-ops`` command line (typer). Command modules import their services lazily so that
``dlt-ops --help`` imports neither dlt nor any database driver nor any plugin."""

from __future__ import annotations

import sys

from dlt_ops.cli.app import app


def run() -> None:
    """Console-script entry point: turn expected failures into one line and an exit code."""
    from dlt_ops.cli.errors import handle_errors

    for stream in (sys.stdout, sys.stderr):  # status glyphs must not crash odd encodings
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="replace")
    with handle_errors():
        app()


def main() -> None:
    """The ``dlt-ops`` console script: :func:`run`, then leave the process without the
    interpreter's teardown (:mod:`dlt_ops.fast_exit`; ~0.2 s once dlt is loaded)."""
    from dlt_ops.fast_exit import leave

    try:
        run()
    except SystemExit as done:
        if done.code is None or isinstance(done.code, int):
            leave(done.code or 0)  # returns only when a normal exit is needed
        raise
    leave(0)


__all__ = ["app", "main", "run"]
