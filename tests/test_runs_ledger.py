"""The runner and the ledger on DuckDB: failures land rows, windows bound incrementals, the
CLI's exit codes, and status's ledger states."""

from __future__ import annotations

import json
from pathlib import Path

import dlt
import duckdb

import dlt_ops

CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"
{extra}

[sources.events_src.dlt_ops]
schedule = "@daily"

[sources.bad_src.dlt_ops]
schedule = "@daily"
"""


def _rows(root: Path, sql: str, source: str = "events_src") -> list[tuple]:
    with duckdb.connect(str(root / f"{source}_pipeline.duckdb"), read_only=True) as con:
        return con.execute(sql).fetchall()


def _ledger(root: Path, source: str = "events_src") -> list[tuple]:
    return _rows(
        root,
        "SELECT status, error_summary, records_loaded, window_from, trigger_source, run_id "
        "FROM ds._dlt_ops_runs ORDER BY started_at",
        source,
    )


def test_source_that_raises_lands_a_failed_row(project, templates, cli) -> None:  # noqa: ANN001
    root = project(CONFIG.format(extra=""), {"bad_src": templates["raising"]})
    proc = cli("pipeline", "run", "-s", "bad_src", "-y", cwd=root)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ValueError: cannot resolve secret"), last
    assert "bad_src" in last and "failed" in last
    ((status, summary, loaded, *_),) = _ledger(root, "bad_src")
    assert status == "failed" and loaded is None
    assert summary.startswith("ValueError: cannot resolve secret sources.bad_src.api_key")
    assert "\n" not in summary and len(summary) <= 500


EXTRACT_RAISES = """
import dlt


@dlt.resource(name="orders")
def orders():
    yield [{"a": 1}]
    raise ConnectionError("upstream said no: password=hunter2hunter2 rejected")


@dlt.source(name="{name}")
def {name}_source():
    return orders
"""


def test_failure_inside_dlt_leads_with_the_cause(project, cli) -> None:  # noqa: ANN001
    root = project(CONFIG.format(extra=""), {"bad_src": EXTRACT_RAISES})
    proc = cli("pipeline", "run", "-s", "bad_src", "-y", cwd=root)
    assert proc.returncode == 1, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ConnectionError: upstream said no: password=*** rejected"), last
    assert "step extract" in last and "resource orders" in last
    assert "PipelineStepFailed" not in last and "hunter2" not in proc.stderr
    ((status, summary, *_),) = _ledger(root, "bad_src")
    assert status == "failed"
    assert summary.startswith("ConnectionError: upstream said no: password=*** rejected ("), summary
    assert "step extract" in summary and "resource orders" in summary and "load_id " in summary

    debug = cli("--debug", "pipeline", "run", "-s", "bad_src", "-y", cwd=root)
    assert "PipelineStepFailed" in debug.stderr  # the whole chain, wrappers included
    assert "ConnectionError" in debug.stderr and "hunter2" not in debug.stderr


def test_unresolvable_dataset_lands_no_row_and_exits_2(project, templates, cli) -> None:  # noqa: ANN001
    config = CONFIG.format(extra="").replace('default_dataset = "ds"', "")
    root = project(config, {"events_src": templates["events"]})
    proc = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    assert proc.returncode == 2
    assert "No dataset configured" in proc.stderr
    assert not (root / "events_src_pipeline.duckdb").exists()


def test_usage_errors_exit_2_before_any_row(project, templates, cli) -> None:  # noqa: ANN001
    root = project(CONFIG.format(extra=""), {"events_src": templates["events"]})
    cases = [
        (["-s", "nope"], "unknown source 'nope'"),
        (["-s", "events_src", "--trigger-source", "prefect"], "no trigger_emitter plugin named"),
        (["-s", "events_src", "--from", "2026-01-01T00:00:00"], "--from and --to go together"),
        (
            ["-s", "events_src", "--from", "2026-01-01", "--to", "2026-01-02T00:00Z"],
            "timezone-naive",
        ),
        (
            ["-s", "events_src", "--from", "2026-01-03T00:00Z", "--to", "2026-01-02T00:00Z"],
            "empty window",
        ),
    ]
    for args, message in cases:
        proc = cli("pipeline", "run", *args, "-y", cwd=root)
        assert proc.returncode == 2, (args, proc.stderr)
        assert message in proc.stderr, (args, proc.stderr)
    assert not (root / "events_src_pipeline.duckdb").exists()


def test_window_bounds_every_incremental(project, templates, cli) -> None:  # noqa: ANN001
    root = project(CONFIG.format(extra=""), {"events_src": templates["events"]})
    proc = cli(
        "pipeline",
        "run",
        "-s",
        "events_src",
        "-y",
        "--json",
        "--from",
        "2026-01-02T00:00:00+00:00",
        "--to",
        "2026-01-04T00:00:00Z",
        "--run-id",
        "orchestrator-42",
        "--trigger-source",
        "backfill",
        cwd=root,
    )
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)
    assert record["run_id"] == "orchestrator-42" and record["trigger_source"] == "backfill"
    assert record["window_from"] == "2026-01-02T00:00:00+00:00"
    assert record["window_to"] == "2026-01-04T00:00:00+00:00"
    loaded = _rows(root, "SELECT id FROM ds.events ORDER BY id")
    assert loaded == [(2,), (3,)]  # [from, to): day 4 excluded


def test_incremental_second_run_loads_nothing_new(project, templates, cli) -> None:  # noqa: ANN001
    root = project(CONFIG.format(extra=""), {"events_src": templates["events"]})
    for _ in range(2):
        assert cli("pipeline", "run", "-s", "events_src", "-y", cwd=root).returncode == 0
    ledger = _ledger(root)
    assert [r[0] for r in ledger] == ["completed", "completed"]
    assert [r[2] for r in ledger] == [6, 0]
    assert _rows(root, "SELECT count(*) FROM ds.events") == [(6,)]
    # every row names the versions that wrote it
    versions = _rows(root, "SELECT DISTINCT dltops_version, dlt_version FROM ds._dlt_ops_runs")
    assert versions == [(dlt_ops.__version__, dlt.__version__)]


def test_unknown_resource_is_refused_before_anything_is_written(project, templates, cli) -> None:  # noqa: ANN001
    root = project(CONFIG.format(extra=""), {"events_src": templates["events"]})
    proc = cli("pipeline", "run", "-s", "events_src", "-r", "nope", "-y", cwd=root)
    assert proc.returncode == 2
    assert "has no resource(s) nope" in proc.stderr and "events" in proc.stderr
    assert not (root / "events_src_pipeline.duckdb").exists()  # exit 2: nothing was done


def test_preflight_failure_lands_a_failed_row(project, templates, cli) -> None:  # noqa: ANN001
    extra = "[dlt_ops.rules]\nstale_source = true  # a typo: no such rule"
    root = project(CONFIG.format(extra=extra), {"events_src": templates["events"]})
    proc = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    assert proc.returncode == 1, proc.stderr
    ((status, summary, loaded, *_),) = _ledger(root)
    assert status == "failed" and loaded is None
    assert summary.startswith("UnknownRuleIdError") and "stale_source" in summary
    assert not _rows(
        root, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'events'"
    )[0][0]


def test_hostile_dataset_names_are_refused_before_anything_is_written(
    project, templates, cli
) -> None:  # noqa: ANN001
    root = project(CONFIG.format(extra=""), {"events_src": templates["events"]})
    for hostile in ('x"; DROP TABLE ds._dlt_ops_runs; --', "naïve", "d" * 1100, "raw-data"):
        proc = cli("pipeline", "run", "-s", "events_src", "-y", "-d", hostile, cwd=root)
        assert proc.returncode == 2, (hostile[:20], proc.stderr)
        assert "is not a valid SQL name" in proc.stderr or "characters long" in proc.stderr
    assert not (root / "events_src_pipeline.duckdb").exists()


def test_declining_the_prompt_runs_nothing_and_exits_0(project, templates) -> None:  # noqa: ANN001
    import os
    import subprocess
    import sys

    root = project(CONFIG.format(extra=""), {"events_src": templates["events"]})
    master, slave = os.openpty()  # a terminal on stdin, as a person would have
    code = "import sys; sys.argv=['dlt-ops',*sys.argv[1:]]; from dlt_ops.cli import main; main()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "pipeline", "run", "-s", "events_src"],
        cwd=root, stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false"},
    )  # fmt: skip
    os.close(slave)
    os.write(master, b"n\n")
    _, err = proc.communicate(timeout=60)
    os.close(master)
    assert proc.returncode == 0, err
    assert "Start pipeline?" in err and "Aborted: nothing was run." in err
    assert not (root / "events_src_pipeline.duckdb").exists()
