"""What a resumed run skipped, on the books: its ledger row, its receipt and a WARNING.

A resume after a failed extract starts at the checkpoint (minus the overlap), so the rows of
``[window start, resume point)`` that the failed attempt extracted were thrown away with its
package and are never asked for again (see docs/checkpoints.md). The run records each
resume as a :class:`Resume`: the ledger's ``resumed_from`` column holds them as JSON, the
resource's receipt row carries the span, and ``runs show`` prints the backfill that loads it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any


@dataclass(frozen=True)
class Resume:
    """One resource's resume: the checkpoint it read and the span ``[skipped_from, resumed_from)``
    it did not extract (cursor values as stored: ISO-8601 for datetimes)."""

    resource: str
    checkpoint: str
    skipped_from: str | None
    resumed_from: str

    @classmethod
    def of(cls, resource: str, checkpoint: str, start: Any, adjusted: Any) -> Resume:
        """From the live values: ``start`` where the run would have begun, ``adjusted`` where
        it begins."""
        return cls(resource, checkpoint, _text(start), serialize_value(adjusted))

    @property
    def span(self) -> str:
        """``[from, to)`` as printed."""
        return f"[{self.skipped_from or 'the window start'}, {self.resumed_from})"

    def backfill_command(self, source: str) -> str | None:
        """The ``pipeline backfill`` that loads the skipped span exactly (one chunk), or
        ``None`` when the cursor is not a timestamp (backfill windows are timestamps)."""
        start, end = _instant(self.skipped_from), _instant(self.resumed_from)
        if start is None or end is None or end <= start:
            return None
        days = max(1, math.ceil((end - start) / timedelta(days=1)))
        return (
            f"dlt-ops pipeline backfill {source} -r {self.resource} --from "
            f"{start.isoformat()} --to {end.isoformat()} --chunk {days}d"
        )

    def describe(self, source: str) -> str:
        """One line for the log and ``runs show``."""
        command = self.backfill_command(source)
        recover = (
            f"load it with: {command}"
            if command
            else "the cursor is not a timestamp, so no backfill window can bound it"
        )
        return (
            f"[{self.resource}] resumed from checkpoint {self.checkpoint}: the span "
            f"{self.span} was not extracted by this run; {recover}"
        )

    def as_json(self) -> dict[str, Any]:
        """The ledger's form."""
        return {
            "resource": self.resource,
            "checkpoint": self.checkpoint,
            "skipped_from": self.skipped_from,
            "resumed_from": self.resumed_from,
        }


def serialize_value(value: Any) -> str:
    """A cursor value as checkpoints store it: ISO-8601 for datetimes and dates."""
    return value.isoformat() if isinstance(value, datetime | date) else str(value)


def _text(value: Any) -> str | None:
    return None if value is None else serialize_value(value)


def _instant(text: str | None) -> datetime | None:
    """A tz-aware datetime from a stored cursor text, else ``None``."""
    if text is None:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        return None
    return value if value.tzinfo is not None else None


def ledger_text(resumes: Iterable[Resume]) -> str | None:
    """The ``resumed_from`` column: a JSON list, ``None`` when nothing resumed."""
    items = [r.as_json() for r in resumes]
    return json.dumps(items, separators=(",", ":")) if items else None


def from_ledger(text: str | None) -> list[Resume]:
    """The resumes a ledger row records (an unreadable value reads as none)."""
    if not text:
        return []
    try:
        items = json.loads(text)
        return [
            Resume(str(i["resource"]), str(i["checkpoint"]), i.get("skipped_from"),
                   str(i["resumed_from"]))
            for i in items
        ]  # fmt: skip
    except (ValueError, TypeError, KeyError):
        return []
