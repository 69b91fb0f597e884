"""Receipts' counting steps on real dlt resources: rows in, pages, and what dlt let through."""

from __future__ import annotations

from typing import Any

import dlt
import pytest

from dlt_ops.receipts.counting import Tallies, _size, attach_counters


def _source(pages: list[list[dict[str, Any]]]) -> Any:
    @dlt.resource(name="events", primary_key="id")
    def events(cursor=dlt.sources.incremental("id", initial_value=2)):  # noqa: ANN001, ANN202, B008
        yield from pages

    @dlt.resource(name="other")
    def other():  # noqa: ANN202
        yield {"a": 1}

    @dlt.source(name="counted")
    def counted():  # noqa: ANN202
        return events, other

    return counted()


def test_rows_pages_and_passed_are_counted_per_resource() -> None:
    tallies = Tallies()
    source = attach_counters(_source([[{"id": 1}, {"id": 2}, {"id": 3}], [{"id": 4}]]), tallies)
    rows = list(source)
    assert len(rows) == 4  # ids 2, 3 and 4 of events, and other's row
    events = tallies.by_resource["events"]
    assert (events.records_in, events.pages, events.passed) == (4, 2, 3)
    other = tallies.by_resource["other"]
    assert (other.records_in, other.pages, other.passed) == (1, 1, 1)
    assert set(tallies.by_resource) == {"events", "other"}


def test_only_selected_resources_are_counted() -> None:
    tallies = Tallies()
    source = _source([[{"id": 5}]]).with_resources("events")
    attach_counters(source, tallies)
    list(source)
    assert set(tallies.by_resource) == {"events"}
    assert tallies.of("events").passed == 1


def test_a_tally_is_created_once() -> None:
    tallies = Tallies()
    tallies.of("r").records_in += 2
    assert tallies.of("r").records_in == 2


def test_item_sizes() -> None:
    pa = pytest.importorskip("pyarrow")
    table = pa.table({"a": [1, 2, 3]})
    assert _size(table) == 3
    assert _size(table.to_batches()[0]) == 3
    assert _size([table, table]) == 6
    assert _size([{"a": 1}, {"a": 2}]) == 2
    assert _size([]) == 0
    assert _size({"num_rows": 9}) == 1
    assert _size("text") == 1

    class Flag:
        num_rows = True  # a bool is not a row count

    assert _size(Flag()) == 1
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [1, 2]})
    assert _size(frame) == 2
    assert _size([frame, frame]) == 4
    assert _size(pd.Series([1, 2, 3])) == 1  # a yielded Series is one item, not a table
