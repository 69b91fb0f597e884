"""``list_checkpoints`` / ``cleanup_checkpoints`` take the dlt pipeline object, as in 0.1:
a script that holds the pipeline needs no dlt-ops project, and 0.1's positional order works."""

from __future__ import annotations

from typing import Any

import pytest

from dlt_ops import cleanup_checkpoints, list_checkpoints
from dlt_ops.errors import UsageError


def _half_done(ck: Any, target: Any, make_pipeline: Any) -> Any:
    """A pipeline with completed rows of one resource and active rows of another."""
    pipeline = make_pipeline(target)
    pipeline.run(ck.resource(ck.FakeApi(), name="done_events"))
    with pytest.raises(Exception, match="injected API failure"):
        pipeline.run(ck.resource(ck.FakeApi(fail_after=4), name="open_events"))
    return pipeline


def test_list_takes_the_pipeline_by_keyword_and_by_position(
    ck: Any, target: Any, make_pipeline: Any
) -> None:
    pipeline = _half_done(ck, target, make_pipeline)
    by_keyword = list_checkpoints(pipeline=pipeline)
    assert {(r["resource_name"], r["status"]) for r in by_keyword} == {
        ("done_events", "completed"),
        ("open_events", "active"),
    }
    assert all(r["pipeline_name"] == "ck_pipeline" for r in by_keyword)
    assert list_checkpoints(None, "_dlt_custom_checkpoints", pipeline) == by_keyword


def test_cleanup_with_the_pipeline_keeps_active_rows_unless_asked(
    ck: Any, target: Any, make_pipeline: Any
) -> None:
    pipeline = _half_done(ck, target, make_pipeline)
    kept = cleanup_checkpoints(pipeline=pipeline)
    assert kept.deleted > 0 and kept.active_kept > 0
    assert {r[4] for r in ck.rows(target)} == {"active"}
    # 0.1's order: (pipeline_name, resource_name, checkpoint_table, pipeline)
    gone = cleanup_checkpoints(None, "open_events", "_dlt_custom_checkpoints", pipeline,
                               include_active=True)  # fmt: skip
    assert gone.deleted == kept.active_kept and gone.active_kept == 0
    assert ck.rows(target) == []


def test_a_pipeline_name_that_is_not_the_pipelines_own_is_refused(
    ck: Any, duck: Any, make_pipeline: Any
) -> None:
    pipeline = _half_done(ck, duck, make_pipeline)
    with pytest.raises(UsageError, match="not the given pipeline's name 'ck_pipeline'"):
        list_checkpoints("other_pipeline", pipeline=pipeline)
    assert len(ck.rows(duck)) > 0
