"""`dlt-ops --help` stays cheap: no dlt, no database driver, no plugin module."""

from __future__ import annotations

import subprocess
import sys

FORBIDDEN = (
    "dlt",
    "duckdb",
    "psycopg",
    "psycopg2",
    "google.cloud",
    "dltops_duckdb",
    "dltops_postgres",
    "dltops_bigquery",
    "sqlglot",
    "pyarrow",
)
HELP = "import sys; sys.argv = ['dlt-ops', *sys.argv[1:]]; from dlt_ops.cli import run; run()"


def _imported_modules(*args: str) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", HELP, *args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    assert "dlt_ops.cli" in names, "importtime output not parsed"
    return names


def _offenders(names: set[str]) -> list[str]:
    return sorted(n for n in names for f in FORBIDDEN if n == f or n.startswith(f + "."))


def test_help_imports_no_dlt_driver_or_plugin() -> None:
    assert _offenders(_imported_modules("--help")) == []


def test_subcommand_help_imports_no_dlt_driver_or_plugin() -> None:
    assert _offenders(_imported_modules("plugins", "--help")) == []


def test_the_detector_would_see_dlt() -> None:
    # guard against a vacuous pass: importing dlt explicitly must show up in the same parse
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import duckdb"],
        capture_output=True,
        text=True,
        check=True,
    )
    names = {ln.rsplit("|", 1)[1].strip() for ln in proc.stderr.splitlines() if "|" in ln}
    assert "duckdb" in _offenders(names)
