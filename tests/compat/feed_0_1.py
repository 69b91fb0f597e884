"""A source as a dlt-ops 0.1 user wrote it: a checkpointed incremental feed whose failures
the tests inject through the environment (run by 0.1 and by this version alike)."""

import os
from datetime import UTC, datetime, timedelta

import dlt

from dlt_ops import with_checkpoints

START = datetime(2025, 12, 31, tzinfo=UTC)
T0 = datetime(2026, 1, 1, tzinfo=UTC)
ROWS = [{"id": i, "at": T0 + timedelta(hours=6 * i)} for i in range(40)]


def _note(since):
    path = os.environ.get("FEED_CALLS")
    if path:
        with open(path, "a") as f:
            f.write(since.isoformat() + "\n")


@dlt.resource(name="events", primary_key="id", write_disposition="append")
@with_checkpoints(cursor_field="at", frequency=1)
def events(at=dlt.sources.incremental("at", initial_value=START)):  # noqa: B008
    since, end = at.start_value, at.end_value
    _note(since)
    fail_after = int(os.environ.get("FEED_FAIL_AFTER_PAGE", "0"))
    fail_from = os.environ.get("FEED_FAIL_FROM")
    if fail_from and since >= datetime.fromisoformat(fail_from):
        raise RuntimeError("injected chunk failure")
    rows = [r for r in ROWS if r["at"] >= since and (end is None or r["at"] < end)]
    for number, first in enumerate(range(0, len(rows), 2), 1):
        if fail_after and number > fail_after:
            raise RuntimeError("injected page failure")
        yield rows[first : first + 2]


@dlt.source(name="feed")
def feed_source():
    return events
