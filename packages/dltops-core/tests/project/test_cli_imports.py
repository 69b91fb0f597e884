"""`--help` of the project commands imports neither dlt nor any driver."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("dlt", "duckdb", "psycopg", "google")


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["init", "--help"], ["pipeline", "--help"], ["pipeline", "list", "--help"],
     ["pipeline", "validate", "--help"], ["pipeline", "resources", "--help"]],
)  # fmt: skip
def test_help_is_light(argv: list[str]) -> None:
    code = (
        "import sys; from dlt_ops.cli import run; sys.argv = ['dlt-ops', *sys.argv[1:]]\n"
        "try:\n    run()\nexcept SystemExit:\n    pass\n"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or "
        "m.startswith('google.cloud')]\n"
        "sys.stderr.write('HEAVY:' + ','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True)
    assert out.stderr.strip().endswith("HEAVY:"), out.stderr[-500:]
