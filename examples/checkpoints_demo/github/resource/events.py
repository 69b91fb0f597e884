"""The events resource: a paginated, incremental "API" served from a local fixture.

``FixtureClient`` stands in for a paid, rate-limited HTTP API: it serves the rows of
``fixtures/events.jsonl`` with a cursor at or after ``since``, ``page_size`` rows per page.
Set ``GITHUB_EVENTS_FAIL_AFTER_PAGE=N`` to make it die after serving N pages, the way a flaky
API does halfway through a long pagination.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import dlt
import pydantic

from dlt_ops import with_checkpoints

FAIL_AFTER_ENV = "GITHUB_EVENTS_FAIL_AFTER_PAGE"
EVENTS_INITIAL_TIMESTAMP = datetime(2026, 1, 1, tzinfo=UTC)
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


class Event(pydantic.BaseModel):
    """One event. extra="forbid": an unexpected field fails instead of vanishing."""

    model_config = pydantic.ConfigDict(extra="forbid")

    id: int
    kind: str
    occurred_at: datetime


class FixtureClient:
    """A fake paginated API over a JSON-lines fixture (no network)."""

    page_size = 3

    def __init__(self, name: str) -> None:
        self.path = FIXTURES / name

    def _rows(self) -> list[dict]:
        with self.path.open(encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
        for row in rows:
            row["occurred_at"] = datetime.fromisoformat(row["occurred_at"])
        return sorted(rows, key=lambda r: r["occurred_at"])

    def pages(self, since: datetime | None = None) -> Iterator[list[dict]]:
        """Rows with ``occurred_at >= since``, oldest first, ``page_size`` per page."""
        fail_after = int(os.environ.get(FAIL_AFTER_ENV) or 0)
        rows = [r for r in self._rows() if since is None or r["occurred_at"] >= since]
        for number, start in enumerate(range(0, len(rows), self.page_size), start=1):
            if fail_after and number > fail_after:
                raise RuntimeError(
                    f"injected API failure after page {fail_after} ({FAIL_AFTER_ENV})"
                )
            yield rows[start : start + self.page_size]


@dlt.resource(
    name="events",
    columns=Event,
    primary_key="id",
    write_disposition="append",
    schema_contract={"tables": "evolve", "columns": "freeze", "data_type": "freeze"},
)
@with_checkpoints(cursor_field="occurred_at", frequency=2)
def events(
    # dlt's idiom: the incremental is the parameter's default, dlt binds a fresh copy per run
    occurred_at=dlt.sources.incremental("occurred_at", initial_value=EVENTS_INITIAL_TIMESTAMP),  # noqa: B008
) -> Iterator[list[dict]]:
    """Every event since the incremental's start value, page by page."""
    yield from FixtureClient("events.jsonl").pages(since=occurred_at.start_value)
