"""``status`` text for an abandoned run says how long it has been silent, in seconds when short."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from dlt_ops.cli.status import render_text
from dlt_ops.ledger.model import RunRecord
from dlt_ops.ledger.status import SourceStatus

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def _running(silent_s: float) -> RunRecord:
    last = NOW - timedelta(seconds=silent_s)
    return RunRecord(
        pipeline_name="p", source_section="s", resource_name=None, destination="duckdb",
        dataset="ds", run_id="0123456789abcdef", dlt_run_id=None, backfill_id=None,
        trigger_source="cli", started_at=last, completed_at=None, status="running",
        records_extracted=None, records_loaded=None, error_summary=None, host="h", pid=42,
        heartbeat_at=last,
    )  # fmt: skip


def test_short_silences_are_in_seconds() -> None:
    text = render_text([SourceStatus("s", "ok", runs=[_running(50)])], NOW, heartbeat_s=10)
    assert "abandoned?" in text and "no heartbeat for 50s (host h, pid 42)" in text, text
    assert "0m" not in text


def test_long_silences_keep_minutes_and_hours() -> None:
    text = render_text([SourceStatus("s", "ok", runs=[_running(3 * 3600 + 300)])], NOW, 10)
    assert "no heartbeat for 3h 05m" in text, text
