"""Resume semantics on real DuckDB and PostgreSQL, through plain dlt pipelines."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

pytestmark = pytest.mark.integration


def _run(pipeline: Any, resource: Any) -> BaseException | None:
    try:
        pipeline.run(resource)
    except Exception as exc:  # dlt wraps extract errors in PipelineStepFailed
        return exc
    return None


def _loaded(target: Any) -> list[int]:
    return [r[0] for r in target.query("SELECT id FROM ds.events ORDER BY id")]


def test_seed_scenario(ck: Any, target: Any, make_pipeline: Any, logs: list) -> None:
    pipeline = make_pipeline(target)
    api = ck.FakeApi(fail_after=3)
    assert _run(pipeline, ck.resource(api)) is not None
    # one active checkpoint: page 2, the max of rows 03:00..05:00
    assert ck.rows(target) == [
        ("events", "2db0bb0b60653f75", "2026-01-01T05:00:00+00:00", 2, "active")
    ]
    assert "[events] Checkpoint saved: page 2, 6 records, value: 2026-01-01T05:00:00+00:00" in (
        ck.events(logs)
    )
    api.fail_after = 0
    assert _run(pipeline, ck.resource(api)) is None
    # exactly the 15 rows from the checkpoint on (05:00 is id 6)
    assert _loaded(target) == list(range(6, 21))
    text = ck.events(logs)
    assert (
        "[events] Resuming from checkpoint: 2026-01-01T05:00:00+00:00 "
        "(adjusted: 2026-01-01 04:59:59+00:00)"
    ) in text
    assert "[events] Checkpoint saved: page 4, 12 records, value: 2026-01-01T16:00:00+00:00" in text
    assert "[events] Checkpoints marked as completed" in text
    statuses = {(r[2], r[4]) for r in ck.rows(target)}
    assert statuses == {
        ("2026-01-01T05:00:00+00:00", "completed"),
        ("2026-01-01T10:00:00+00:00", "completed"),
        ("2026-01-01T16:00:00+00:00", "completed"),
    }
    # a later run resumes nothing and requests from dlt's advanced cursor
    api.rows = ck.hourly_rows(22)
    assert _run(pipeline, ck.resource(api)) is None
    assert _loaded(target) == list(range(6, 23))


def test_resume_never_moves_backwards_across_two_failed_attempts(
    ck: Any, target: Any, make_pipeline: Any
) -> None:
    pipeline = make_pipeline(target)
    # attempt 1: pages 1-5 served, checkpoints at page 2 (05:00) and page 4 (11:00)
    api = ck.FakeApi(fail_after=5)
    assert _run(pipeline, ck.resource(api)) is not None
    # attempt 2 resumes at 10:59:59: pages [11..13] [14..16], checkpoint page 2 = 16:00, dies
    api.fail_after = 2
    assert _run(pipeline, ck.resource(api)) is not None
    active = [(r[2], r[3]) for r in ck.rows(target) if r[4] == "active"]
    # attempt 1's page-4 row has the higher page number but the lower cursor
    assert ("2026-01-01T11:00:00+00:00", 4) in active
    assert ("2026-01-01T16:00:00+00:00", 2) in active
    # attempt 3 resumes from the greatest cursor (16:00), not from page 4 (11:00)
    api.fail_after = 0
    assert _run(pipeline, ck.resource(api)) is None
    assert _loaded(target) == [17, 18, 19, 20]


def test_resumed_run_without_pages_still_completes(
    ck: Any, target: Any, make_pipeline: Any
) -> None:
    pipeline = make_pipeline(target)
    api = ck.FakeApi(fail_after=3)
    assert _run(pipeline, ck.resource(api)) is not None
    api.fail_after, api.rows = 0, []  # the API now has nothing at or after the checkpoint
    assert _run(pipeline, ck.resource(api)) is None
    assert [r[4] for r in ck.rows(target)] == ["completed"]
    # nothing stays active, so the next run does not re-apply a stale resume point
    api.rows = ck.hourly_rows(20)
    assert _run(pipeline, ck.resource(api)) is None
    assert _loaded(target) == list(range(1, 21))


def test_retention_is_scoped_to_pipeline_and_resource(
    ck: Any, target: Any, make_pipeline: Any
) -> None:
    pipeline = make_pipeline(target)
    assert _run(pipeline, ck.resource(ck.FakeApi(rows=ck.hourly_rows(2)))) is None  # table exists
    old = (ck.T0 - timedelta(days=30)).isoformat()
    cols = (
        "pipeline_name, resource_name, run_id, checkpoint_value, page_number, "
        "records_processed, status, created_at, updated_at"
    )
    for pipe, resource in (("ck_pipeline", "events"), ("other_pipeline", "events"),
                           ("ck_pipeline", "users")):  # fmt: skip
        target.execute(
            f"INSERT INTO ds._dlt_custom_checkpoints ({cols}) VALUES "
            f"('{pipe}', '{resource}', 'x', 'v', 1, 1, 'completed', '{old}', '{old}')"
        )
    api = ck.FakeApi(rows=ck.hourly_rows(6))
    assert _run(pipeline, ck.resource(api, cleanup_days=7)) is None
    left = target.query(
        "SELECT pipeline_name, resource_name FROM ds._dlt_custom_checkpoints WHERE run_id = 'x' "
        "ORDER BY 1, 2"
    )
    # only this pipeline's and this resource's old completed row was deleted
    assert left == [("ck_pipeline", "users"), ("other_pipeline", "events")]
