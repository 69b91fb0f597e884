"""The report page drawn from a fleet built in memory: what ledger text can reach the page is
escaped, and times are shown in UTC whatever zone the ledger gave them in."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

from dlt_ops.ledger.model import RunRecord
from dlt_ops.report.collect import FleetReport, RunView, SourceView
from dlt_ops.report.html import render

HOSTILE = '<img src=x onerror="alert(1)">&'
PLUS_FIVE = timezone(timedelta(hours=5, minutes=30))


def _run(run_id: str, started: datetime, status: str = "completed") -> RunRecord:
    return RunRecord(
        pipeline_name="p", source_section="s", resource_name=None, destination="duckdb",
        dataset="d", run_id=run_id, dlt_run_id=None, backfill_id=None, trigger_source="cli",
        started_at=started, completed_at=started + timedelta(seconds=42), status=status,
        records_extracted=7, records_loaded=7, error_summary=f"boom {HOSTILE}",
    )  # fmt: skip


def _page(runs: list[RunView]) -> str:
    view = SourceView("s", destination="duckdb", dataset="d", runs=runs)
    now = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
    return render(FleetReport("proj", now, 2, [view]))


def test_a_run_id_and_outcome_with_markup_are_escaped_in_the_history() -> None:
    started = datetime(2026, 12, 3, 9, 15, tzinfo=UTC)
    page = _page([RunView(_run(HOSTILE, started, "failed"), HOSTILE)])

    assert "<img" not in page and 'onerror="' not in page
    titles = re.findall(r'<rect class="run"[^>]*data-outcome="([^"]*)"[^>]*><title>([^<]*)</title>',
                        page)  # fmt: skip
    assert len(titles) == 1
    outcome, tip = titles[0]
    assert outcome == "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;"
    assert tip.startswith("2026-12-03 09:15 · &lt;img")
    assert tip.endswith("&lt;img src=x o")  # the run id's first 12 characters, escaped


def test_times_from_another_zone_are_shown_in_utc_to_the_minute() -> None:
    started = datetime(2026, 12, 3, 14, 45, 59, 999_999, tzinfo=PLUS_FIVE)  # 09:15:59 UTC
    page = _page([RunView(_run("r1", started), "completed")])

    assert "<title>2026-12-03 09:15 · completed · 42.0 s · 7 records · r1</title>" in page
    assert "14:45" not in page
    assert re.search(r"<td>2026-12-03 09:15</td>", page)  # the fleet table's started column
