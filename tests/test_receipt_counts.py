"""Receipts count rows, whatever shape a resource yields, and find renamed tables.

``sql_database(backend="pyarrow")`` yields Arrow tables, other sources pandas frames or record
batches: each counts its rows, not 1. A resource named ``EventLog`` loads into ``event_log``
(dlt's naming): the receipt finds its loaded rows there. The ledger's ``records_extracted`` is
one figure with the receipt: the rows written to the load package (``records_out`` summed, =
``records_in - filtered``).
"""

from __future__ import annotations

import json

SHAPES = """
import dlt
import pandas as pd
import pyarrow as pa


@dlt.resource(name="arrow_rows")
def arrow_rows():
    yield pa.table({"id": [1, 2, 3]})
    yield pa.table({"id": [4, 5, 6, 7]}).to_batches()[0]


@dlt.resource(name="frame_rows")
def frame_rows():
    yield pd.DataFrame({"id": [1, 2, 3, 4, 5]})


@dlt.resource(name="EventLog")
def event_log():
    yield [{"id": i} for i in range(6)]


@dlt.source(name="{name}")
def {name}_source():
    return arrow_rows, frame_rows, event_log
"""

CONFIG = '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "shapes_ds"\n'
EXPECTED = {"EventLog": 6, "arrow_rows": 7, "frame_rows": 5}


def test_arrow_frames_and_renamed_tables_reconcile(project, cli) -> None:
    root = project(CONFIG, {"shapes": SHAPES})
    run = cli("pipeline", "run", "-s", "shapes", "-y", cwd=root)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "receipts.unreconciled" not in run.stderr
    doc = json.loads(cli("runs", "show", "last", "--json", cwd=root).stdout)
    got = {
        r["resource_name"]: (r["records_in"], r["records_out"], r["rows_loaded"], r["filtered"])
        for r in doc["receipt"]
    }
    assert got == {name: (n, n, n, 0) for name, n in EXPECTED.items()}, doc["receipt"]
    ledger = doc["run"]
    assert ledger["records_extracted"] == sum(r["records_out"] for r in doc["receipt"]) == 18
    assert ledger["records_loaded"] == 18
    text = cli("runs", "show", "last", cwd=root).stdout
    event_line = next(line for line in text.splitlines() if line.startswith("EventLog"))
    assert event_line.split()[-2] == "6", text  # loaded column (before cost)


def test_records_extracted_agrees_with_the_receipt_when_filtered(project, templates, cli) -> None:
    root = project(CONFIG, {"events": templates["events"]})
    assert cli("pipeline", "run", "-s", "events", "-y", cwd=root).returncode == 0
    again = cli("pipeline", "run", "-s", "events", "-y", cwd=root)  # the cursor filters all 6
    assert again.returncode == 0, again.stderr[-2000:]
    doc = json.loads(cli("runs", "show", "last", "--json", cwd=root).stdout)
    (receipt,) = doc["receipt"]
    assert receipt["records_in"] == 6 and receipt["filtered"] == 6, receipt
    extracted = doc["run"]["records_extracted"]
    assert extracted == receipt["records_out"] == receipt["records_in"] - receipt["filtered"], doc


QUARANTINE_THEN_FAIL = """
[sources.events.dlt_ops.assertions.events]
unique_columns = { value = ["kind"], on_failure = "quarantine" }
min_rows_per_load = 10
"""
BATCH_WARN = """
[sources.events.dlt_ops.assertions.events]
min_rows_per_load = { value = 10, on_failure = "warn" }
"""


def test_a_failed_run_rejects_nothing_it_did_not_quarantine(project, templates, cli) -> None:
    root = project(CONFIG + QUARANTINE_THEN_FAIL, {"events": templates["events"]})
    run = cli("pipeline", "run", "-s", "events", "-y", cwd=root)
    assert run.returncode == 1, run.stderr[-2000:]
    (receipt,) = json.loads(cli("runs", "show", "last", "--json", cwd=root).stdout)["receipt"]
    # 3 rows would have been quarantined, but the run failed before anything was written to
    # _dlt_rejected: all 6 were held back by the failure
    assert (receipt["rejected"], receipt["failed"], receipt["records_out"]) == (0, 6, 0), receipt
    assert receipt["records_in"] == receipt["filtered"] + receipt["failed"]


def test_batch_warn_verdicts_reach_the_receipt(project, templates, cli) -> None:
    root = project(CONFIG + BATCH_WARN, {"events": templates["events"]})
    run = cli("pipeline", "run", "-s", "events", "-y", cwd=root)
    assert run.returncode == 0, run.stderr[-2000:]
    (receipt,) = json.loads(cli("runs", "show", "last", "--json", cwd=root).stdout)["receipt"]
    # the batch of 6 loaded under a warn verdict: each of its rows is warned
    assert (receipt["warned"], receipt["rows_loaded"]) == (6, 6), receipt


def test_a_failed_receipt_write_names_the_receipts_table(project, templates, cli) -> None:
    import duckdb

    root = project(CONFIG, {"events": templates["events"]})
    with duckdb.connect(str(root / "events_pipeline.duckdb")) as con:  # a foreign table there
        # (the receipts table evolves: it gains the columns it lacks, so only a column our
        # insert cannot fill makes the write fail)
        con.execute(
            "CREATE SCHEMA shapes_ds; CREATE TABLE shapes_ds._dlt_ops_receipts (x INT NOT NULL)"
        )
    run = cli("pipeline", "run", "-s", "events", "-y", cwd=root)
    assert run.returncode == 0, run.stderr[-2000:]  # receipts are observability
    assert "Failed to write receipt rows to _dlt_ops_receipts" in run.stderr, run.stderr[-2000:]
    assert "receipt rows to _dlt_ops_runs" not in run.stderr
