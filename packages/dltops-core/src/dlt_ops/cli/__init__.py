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


__all__ = ["app", "run"]
