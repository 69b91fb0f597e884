"""``[dlt_ops] load_timestamp_column``: every row a run loads carries the run's start time.

The value is one per run (the ledger row's ``started_at``, tz-aware UTC), so every table of the
run agrees and ``pipeline reconcile --include-removal`` can window rows by it. Root rows get it
from a map step added last to each selected resource (after the gates: assertions judge the
source's own items); nested tables get it from dlt's relational normalizer, which copies the
root row's value into every child row it derives (``propagation.root``). Items of any shape dlt
loads are stamped: dicts (one, or a list of them), Arrow tables and record batches, pandas frames.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dlt.extract.source import DltSource


def stamp_source(source: DltSource, column: str, at: datetime) -> DltSource:
    """Add ``column`` = ``at`` to every row each selected resource of ``source`` yields."""
    from dlt.common.normalizers.json.relational import DataItemNormalizer

    def stamp(item: Any) -> Any:
        return _stamped(item, column, at)

    for resource in source.selected_resources.values():
        resource.add_map(stamp)
    DataItemNormalizer.update_normalizer_config(
        source.schema,
        {"propagation": {"root": {column: column}}},  # type: ignore[typeddict-item]
    )
    return source


def _stamped(item: Any, column: str, at: datetime) -> Any:
    if isinstance(item, dict):
        return {**item, column: at}
    module = type(item).__module__
    if module.startswith("pyarrow"):
        import pyarrow as pa

        values = pa.array([at] * item.num_rows, type=pa.timestamp("us", tz="UTC"))
        names = list(item.schema.names)
        if column in names:
            return item.set_column(names.index(column), column, values)
        return item.append_column(column, values)
    if module.startswith("pandas"):
        return item.assign(**{column: at})
    if hasattr(item, "model_dump"):  # a Pydantic model: dlt loads its dict
        return {**item.model_dump(by_alias=True), column: at}
    if isinstance(item, (str, int, float, datetime)):  # dlt's row for a scalar, stamped
        return {"value": item, column: at}
    return item
