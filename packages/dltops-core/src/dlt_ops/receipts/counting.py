"""Counting steps: what each resource yielded, and what survived dlt's own filters.

Two transform steps per selected resource, placed by dlt's ``placement_affinity``:

* ``records_in`` right after the resource's generator (and the user's own map steps),
  before Pydantic validation (0.9) and the incremental (1.0) — what the resource yielded;
* ``passed`` right after the incremental — what dlt's validation, cursor filtering and
  de-duplication let through. ``records_in - passed`` is the receipt's ``filtered``.

Items are counted as rows (a yielded page of 50 rows counts 50, an Arrow table or a pandas
frame of 50 rows counts 50); pages (yielded items) are counted too, for ``per_page`` cost rates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ResourceTally:
    """Counts for one resource."""

    records_in: int = 0
    pages: int = 0
    passed: int = 0


@dataclass
class Tallies:
    """Counts for every selected resource of a run."""

    by_resource: dict[str, ResourceTally] = field(default_factory=dict)

    def of(self, resource: str) -> ResourceTally:
        """The tally of ``resource`` (created on first use)."""
        return self.by_resource.setdefault(resource, ResourceTally())


def _size(item: Any) -> int:
    """Rows in one yielded item: a list counts its elements (each may itself be a table), an
    Arrow ``Table``/``RecordBatch`` its ``num_rows``, a pandas ``DataFrame`` its length, any
    other item (a dict, a model) 1. Duck-typed: pyarrow and pandas are never imported here."""
    if isinstance(item, list):
        return sum(_size(x) for x in item) if item and _is_table(item[0]) else len(item)
    rows = getattr(item, "num_rows", None)  # pyarrow.Table / pyarrow.RecordBatch
    if isinstance(rows, int) and not isinstance(rows, bool):
        return rows
    if _is_frame(item):
        return int(item.shape[0])
    return 1


def _is_frame(item: Any) -> bool:
    return type(item).__name__ == "DataFrame" and type(item).__module__.startswith("pandas")


def _is_table(item: Any) -> bool:
    return isinstance(getattr(item, "num_rows", None), int) or _is_frame(item)


def attach_counters(source: Any, tallies: Tallies) -> Any:
    """Add the two counting steps to every selected resource of ``source``."""
    from dlt.extract.items_transform import ItemTransform

    class _CountIn(ItemTransform[Any, dict[str, Any]]):
        placement_affinity = 0.05  # after the generator and user maps, before validation
        resource = ""  # the resource it counts, set when attached

        def __call__(self, item: Any, meta: Any = None) -> Any:
            tally = tallies.of(self.resource)
            tally.records_in += _size(item)
            tally.pages += 1
            return item

    class _CountPassed(ItemTransform[Any, dict[str, Any]]):
        placement_affinity = 1.01  # right behind dlt's incremental (1.0)
        resource = ""

        def __call__(self, item: Any, meta: Any = None) -> Any:
            tallies.of(self.resource).passed += _size(item)
            return item

    for name, resource in source.selected_resources.items():
        tallies.of(name)
        for step_cls in (_CountIn, _CountPassed):
            step = step_cls(lambda item: item)
            step.resource = name
            resource.add_step(step)
    return source
