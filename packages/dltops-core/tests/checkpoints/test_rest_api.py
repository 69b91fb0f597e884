"""``rest_api_checkpoints``: which declarative resources it takes, and what it refuses.

(The resume itself runs end to end against a local HTTP server in tests/test_dlt_sources_e2e.py.)
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

dlt = pytest.importorskip("dlt")

from dlt.sources.rest_api import rest_api_resources  # noqa: E402

from dlt_ops import rest_api_checkpoints  # noqa: E402
from dlt_ops.checkpoints.decorator import OPTIONS_ATTR  # noqa: E402
from dlt_ops.checkpoints.rest_api import ORIGINAL_GEN_ATTR  # noqa: E402

START = datetime(2026, 1, 1, tzinfo=UTC)


def _resources() -> list:
    return rest_api_resources(
        {
            "client": {"base_url": "http://127.0.0.1:9/"},
            "resources": [
                {
                    "name": "events",
                    "endpoint": {
                        "path": "events",
                        "params": {"since": "{incremental.start_value}"},
                        "incremental": {"cursor_path": "updated_at", "initial_value": START},
                    },
                },
                "plain",
                {
                    "name": "details",
                    "endpoint": {
                        "path": "events/{id}",
                        "params": {"id": {"type": "resolve", "resource": "events", "field": "id"}},
                    },
                },
            ],
        }
    )


def _by_name(resources: list) -> dict:
    return {r.name: r for r in resources}


def test_wraps_resources_with_an_incremental_only() -> None:
    resources = rest_api_checkpoints(_resources(), frequency=3)
    by_name = _by_name(resources)
    gen = by_name["events"]._pipe.gen
    assert getattr(gen, ORIGINAL_GEN_ATTR) is not None
    assert getattr(gen, OPTIONS_ATTR)["cursor_field"] == "updated_at"
    assert getattr(gen, OPTIONS_ATTR)["frequency"] == 3
    assert gen.__module__.startswith("dlt.sources.rest_api")  # still recognised as rest_api
    for name in ("plain", "details"):
        assert not hasattr(by_name[name]._pipe.gen, ORIGINAL_GEN_ATTR)


def test_wrapped_resource_keeps_its_incremental_visible() -> None:
    from dlt_ops.project.incrementals import incremental_of, window_problem

    (events,) = [r for r in rest_api_checkpoints(_resources(), ["events"]) if r.name == "events"]
    found = incremental_of(events)
    assert found is not None and found.incremental.cursor_path == "updated_at"
    assert window_problem(found, "events") is None  # a datetime initial_value takes a window


def test_wrapping_twice_is_a_no_op() -> None:
    resources = rest_api_checkpoints(_resources(), ["events"])
    gen = _by_name(resources)["events"]._pipe.gen
    rest_api_checkpoints(resources, ["events"])
    assert _by_name(resources)["events"]._pipe.gen is gen


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("plain", 'has no "incremental"'),
        ("details", "depends on another resource"),
        ("nope", "no resource 'nope'"),
    ],
)
def test_refusals_name_the_resource(name: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        rest_api_checkpoints(_resources(), [name])


def test_options_are_checked_like_the_decorator() -> None:
    with pytest.raises(ValueError, match="frequency"):
        rest_api_checkpoints(_resources(), ["events"], frequency=0)
