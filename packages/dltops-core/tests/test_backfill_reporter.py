"""backfill's progress names the chunk(s) in flight; plain lines stay one per event."""

from __future__ import annotations

from dlt_ops.backfill.executor import ChunkEvent
from dlt_ops.backfill.plan import BackfillPlan
from dlt_ops.cli.pipeline_backfill import ChunkReporter


def test_the_bar_names_the_chunk_in_flight() -> None:
    plan = BackfillPlan.build("src", "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z", "1d")
    reporter = ChunkReporter(plan, quiet=True, tty=False)
    reporter(ChunkEvent("running", 0))
    assert reporter.flight() == f"running: {plan.chunks[0].label(3)}"
    assert "chunk 1/3 [2026-01-01T00:00:00+00:00 → 2026-01-02T00:00:00+00:00)" in reporter.flight()
    reporter(ChunkEvent("running", 1))
    assert reporter.flight().endswith(" +1 more")
    reporter(ChunkEvent("completed", 0, records=5))
    assert reporter.flight() == f"running: {plan.chunks[1].label(3)}"
    reporter(ChunkEvent("retrying", 1, attempt=1, error="boom"))
    assert "chunk 2/3" in reporter.flight()  # still in flight: another attempt follows
    reporter(ChunkEvent("failed", 1, error="boom"))
    assert reporter.flight() == ""
