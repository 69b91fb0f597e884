"""`dlt-ops --help` stays cheap: no dlt, no database driver, no plugin module, no markdown
renderer, no rich; a command imports its own module and no other command's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

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
    # lineage and metrics load their libraries only when a run emits or `metrics` runs
    "openlineage",
    "prometheus_client",
    "croniter",  # schedules load it on first evaluation, never at start-up
    # orchestrators are optional extras: never at start-up
    "airflow",
    "dagster",
    # no plugin at start-up: not the manager (nor pluggy), the hook specs or a built-in plugin
    # module; plugin commands are listed from entry-point metadata (dlt_ops.plugins.entry_points)
    "dlt_ops.plugins.manager",
    "pluggy",
    "dlt_ops.hookspecs",
    "dlt_ops.builtin",
)
#: typer's rich help panels (~110 ms with their markdown machinery); dlt-ops' help is plain text
RICH = ("rich", "markdown_it", "typer.rich_utils")
#: the registration layer every invocation loads; any other ``dlt_ops.cli.*`` is a command module
CLI_CORE = {
    "dlt_ops.cli.app",
    "dlt_ops.cli.errors",
    "dlt_ops.cli.lazy",
    "dlt_ops.cli.pipeline",
    "dlt_ops.cli.help_format",
    "dlt_ops.cli.state",
    "dlt_ops.cli.names",
    "dlt_ops.cli.plugin_commands",
}
HELP = "import sys; sys.argv = ['dlt-ops', *sys.argv[1:]]; from dlt_ops.cli import main; main()"
# also list sys.modules at exit (an atexit callback: the CLI leaves with os._exit, after running
# them): importtime misses modules loaded by importlib.import_module
HELP = (
    "import atexit, sys; "
    "atexit.register(lambda: sys.stderr.write('\\nMODULES:' + ','.join(sys.modules))); " + HELP
)


def _imported_modules(
    *args: str, cwd: Path | None = None, check: bool = True, attempts: bool = True
) -> set[str]:
    """Modules the command imported; ``attempts=False`` leaves out imports that only looked
    (dlt_ops.log lets structlog probe for rich and find nothing)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", HELP, *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=cwd,
    )
    assert proc.returncode == 0 or not check, proc.stderr[-2000:]
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line and attempts:
            names.add(line.rsplit("|", 1)[1].strip())
        elif line.startswith("MODULES:"):
            names.update(line.removeprefix("MODULES:").split(","))
    assert "dlt_ops.cli" in names, "importtime output or module list not parsed"
    return names


def _offenders(names: set[str], forbidden: tuple[str, ...] = FORBIDDEN) -> list[str]:
    return sorted(n for n in names for f in forbidden if n == f or n.startswith(f + "."))


def _command_modules(names: set[str]) -> set[str]:
    return {n for n in names if n.startswith("dlt_ops.cli.")} - CLI_CORE


def test_help_imports_no_dlt_driver_or_plugin() -> None:
    assert _offenders(_imported_modules("--help")) == []


def test_subcommand_help_imports_no_dlt_driver_or_plugin() -> None:
    assert _offenders(_imported_modules("plugins", "--help")) == []


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["pipeline", "--help"], ["pipeline", "status", "--help"], ["pipline"]],
)
def test_help_and_usage_errors_render_without_rich(argv: list[str]) -> None:
    assert _offenders(_imported_modules(*argv, check=False, attempts=False), RICH) == []


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--help"], set()),
        (["pipeline", "--help"], set()),
        (["runs", "--help"], {"dlt_ops.cli.runs"}),  # the group lives in its module
        (["pipeline", "status", "--help"], {"dlt_ops.cli.status"}),
        (["runs", "list", "--help"], {"dlt_ops.cli.runs"}),
        (["runs", "show", "--help"], {"dlt_ops.cli.runs"}),
        (["backfill", "list", "--help"], {"dlt_ops.cli.backfill"}),
        (["init", "--help"], {"dlt_ops.cli.init"}),
    ],
)
def test_only_the_command_that_runs_is_imported(argv: list[str], expected: set[str]) -> None:
    assert _command_modules(_imported_modules(*argv)) == expected


def test_status_run_imports_only_its_command(tmp_path: Path) -> None:
    (tmp_path / ".dlt").mkdir()
    (tmp_path / ".dlt" / "config.toml").write_text('[dlt_ops]\ndefault_destination = "duckdb"\n')
    names = _imported_modules("pipeline", "status", cwd=tmp_path, attempts=False)
    assert _command_modules(names) == {"dlt_ops.cli.status"}
    assert "structlog" not in names  # ~45 ms; loads with the first log line, and none came


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


def test_help_does_not_import_the_plugin_framework() -> None:
    """``dlt_ops.hookimpl`` is made on first use: ``--help`` loads no plugin, so no pluggy."""
    assert _offenders(_imported_modules("--help"), ("pluggy",)) == []
