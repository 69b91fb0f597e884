"""dlt's own logger prints no traceback without ``--debug``: a load job that fails terminally
(a value DuckDB cannot cast) logs dlt's lines as one line each, the cause stays in the command's
one-line error, and ``--debug`` brings the tracebacks back."""

from __future__ import annotations

import pytest

from tests.conftest import EVENTS_ON_DUCKDB, write_project

FAILING_LOAD = """
from decimal import Decimal

import dlt


@dlt.resource(name="events", columns={"x": {"data_type": "decimal", "precision": 3, "scale": 0}})
def events():
    yield [{"id": 1, "x": Decimal("123456")}]


@dlt.source(name="{name}")
def {name}_source():
    return events
"""
CAUSE = "Could not cast value 123456 to DECIMAL(3,0)"


@pytest.mark.parametrize("log_format", ["json", "console"])
def test_no_traceback_without_debug(tmp_path, cli, log_format) -> None:  # noqa: ANN001
    root = write_project(tmp_path / "proj", EVENTS_ON_DUCKDB, {"events_src": FAILING_LOAD})
    done = cli("--log-format", log_format, "pipeline", "run", "-s", "events_src", "-y", cwd=root)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert '  File "' not in done.stderr
    dlt_lines = [ln for ln in done.stderr.splitlines() if "|dlt|" in ln]
    assert dlt_lines and all(CAUSE in ln for ln in dlt_lines), dlt_lines  # one line, with cause
    (error,) = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
    assert CAUSE in error
    debug = cli("--debug", "pipeline", "run", "-s", "events_src", "-y", cwd=root)
    assert "Traceback (most recent call last):" in debug.stderr  # --debug keeps them
