"""A backfill's receipts: each chunk attempt reconciles, and `backfill show` sums them all."""

from __future__ import annotations

import json

from dlt_ops.backfill.plan import BackfillPlan

FROM, TO = "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z"


def _reconciles(row: dict) -> bool:
    parts = row["filtered"] + row["rejected"] + row["failed"] + row["records_out"]
    return row["records_in"] == parts


def test_backfill_show_sums_every_chunk_and_retry(duckdb_project) -> None:
    args = ("pipeline", "backfill", "daily", "--from", FROM, "--to", TO, "--chunk", "1d")
    failing = duckdb_project.cli(*args, "--continue-on-error", env={"BF_FAIL_DAYS": "2026-01-02"})
    assert failing.returncode == 1
    assert duckdb_project.cli(*args).returncode == 0  # the failed chunk is retried
    bid = BackfillPlan.build("daily", FROM, TO, "1d").backfill_id
    shown = json.loads(duckdb_project.cli("backfill", "show", bid, "--json").stdout)
    chunk_runs = sorted({c["run_id"] for c in shown["chunks"]})
    per_attempt = []
    for run_id in chunk_runs:
        doc = json.loads(duckdb_project.cli("runs", "show", run_id, "--json").stdout)
        assert doc["run"]["trigger_source"] == "backfill" and doc["run"]["backfill_id"] == bid
        per_attempt += doc["receipt"]
    assert all(_reconciles(r) for r in per_attempt)
    (total,) = shown["receipt"]
    assert _reconciles(total)
    # three one-row days loaded once each; the failed attempt yielded nothing before raising
    assert total["rows_loaded"] == 3 and total["records_out"] == 3
    text = duckdb_project.cli("backfill", "show", bid).stdout
    assert "receipt, summed over every chunk and retry:" in text and "events" in text


def test_backfill_show_sums_only_its_own_chunks_in_its_dataset(duckdb_project) -> None:
    """Two backfills share chunk bounds (so chunk run ids) in a ``-d`` dataset: each `show`
    sums its own attempts' receipts, read from that dataset."""
    env = {"BF_ROWS_PER_DAY": "10"}
    short = ("pipeline", "backfill", "daily", "--from", FROM, "--to", TO, "--chunk", "1d")
    longer = ("pipeline", "backfill", "daily", "--from", FROM, "--to", "2026-01-05T00:00:00Z",
              "--chunk", "1d")  # fmt: skip
    assert duckdb_project.cli(*short, "-d", "other_ds", env=env).returncode == 0
    assert duckdb_project.cli(*longer, "-d", "other_ds", env=env).returncode == 0
    for args, days in ((short, 3), (longer, 4)):
        bid = BackfillPlan.build("daily", args[4], args[6], "1d").backfill_id
        shown = duckdb_project.cli("backfill", "show", bid, "-d", "other_ds", "--json")
        assert shown.returncode == 0, shown.stderr[-2000:]
        doc = json.loads(shown.stdout)
        (total,) = doc["receipt"]
        assert doc["records_loaded"] == total["rows_loaded"] == 10 * days, (days, doc)
