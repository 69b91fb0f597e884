"""Every benchmark script still runs, on tiny inputs (the figures mean nothing here).

Benchmarks are not tests: they live in bench/ and print tables. This only guards against a
script that no longer starts or no longer matches the CLI it measures. No reference install,
no PostgreSQL, no bytecode compilation, no warm-up runs (``DLTOPS_BENCH_SMOKE=1``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
ENV = {**os.environ, "DLTOPS_BENCH_SMOKE": "1", "RUNTIME__DLTHUB_TELEMETRY": "false"}


def _run(script: str, *args: str, cwd: Path) -> str:
    proc = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"{script}:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


@pytest.mark.parametrize(
    ("script", "args", "expect"),
    [
        ("bench_cli_startup.py", ["--runs", "1"], "dlt-ops (this repo)"),
        ("bench_run.py", ["--runs", "1", "--sizes", "10", "--no-reference"], "plain, 10 rows"),
        (
            "bench_status.py",
            "--runs 1 --no-reference --sections cold,sources --sources 2 --source-rows 5".split(),
            "status, 2 sources",
        ),
        (
            "bench_backfill.py",
            ["--runs", "1", "--days", "2", "--skip-workers", "--no-reference"],
            "marginal per chunk",
        ),
        (
            "bench_checkpoints.py",
            ["--pages", "2", "--rows", "5", "--runs", "1", "--skip-postgres"],
            "ckpt pages/s",
        ),
        ("bench_validate.py", ["--runs", "1", "--reference", "/nonexistent"], "dlt-ops warm"),
        ("bench_assertions.py", ["--keys", "1000", "--rows", "1000", "--skip-ref"], "gate"),
        # the dev venv has no Airflow: the script must say so and exit 0 (run_all installs it)
        ("bench_airflow.py", ["--sources", "2", "--runs", "1"], "Airflow"),
        ("bench_airflow_variables.py", ["--days", "1"], "Airflow"),
        # the same for Dagster (run_all uses the cached Dagster test venv)
        ("bench_dagster.py", ["--sources", "2", "--runs", "1"], "Dagster"),
    ],
)
def test_benchmark_script_runs_on_tiny_inputs(
    script: str, args: list[str], expect: str, tmp_path: Path
) -> None:
    assert expect in _run(script, *args, cwd=tmp_path)


def test_run_all_writes_every_row(tmp_path: Path) -> None:
    out = tmp_path / "RESULTS.md"
    _run("run_all.py", "--smoke", "--no-reference", "--no-postgres", "--out", str(out),
         cwd=tmp_path)  # fmt: skip
    text = out.read_text()
    for row in (
        "`dlt-ops --help`",
        "`pipeline status`, 1 source",
        "`pipeline validate`",
        "`pipeline run` / plain dlt",
        "backfill marginal cost per chunk",
        "--workers 4",
        "`pipeline status`, 3 sources",
        "Airflow DAG factory",
        "Airflow Variable look-ups per backfill chunk task",
        "Dagster build_definitions",
        "scheduler run --once",
        "`runs list`, 3 sources",
        "`report`, 3 sources",
        "`metrics`, 3 sources",
        "peak memory of `pipeline run` / plain dlt's",
        "`@with_checkpoints` extract",
    ):
        assert row in text, row
    # the scale rows' growth by fleet size (2 and 3 sources in smoke)
    assert "## Growth with sources" in text and "| `pipeline status`, DuckDB" in text
    assert "| failed |" not in text, text
    # the checkpoint row is the page rate; the note carries the once-per-extract part beside it
    assert "duckdb / plain dlt" in text and "of which opening a session " in text
    assert "ms per extract" in text and "(whole extract " in text
