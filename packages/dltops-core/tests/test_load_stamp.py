"""The load-timestamp map on every item shape dlt loads, through a real dlt pipeline on DuckDB:
dicts, an Arrow table, a pandas frame, scalars and a nested list (a child table)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

AT = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)


def _load(tmp_path: Path, *resources: object) -> dict[str, set[object]]:
    import dlt
    import duckdb

    from dlt_ops.runner.load_stamp import stamp_source

    @dlt.source(name="shapes")
    def shapes() -> list[object]:
        return list(resources)

    db = tmp_path / "shapes.duckdb"
    pipeline = dlt.pipeline(
        pipeline_name="shapes", destination=dlt.destinations.duckdb(str(db)),
        dataset_name="ds", pipelines_dir=str(tmp_path / "p"),
    )  # fmt: skip
    pipeline.run(stamp_source(shapes(), "loaded_at", AT))
    with duckdb.connect(str(db), read_only=True) as con:
        tables = [r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'ds' "
            "AND table_name NOT LIKE '_dlt%'").fetchall()]  # fmt: skip
        return {t: {r[0] for r in con.execute(f"SELECT loaded_at FROM ds.{t}").fetchall()}
                for t in tables}  # fmt: skip


def test_every_item_shape_is_stamped(tmp_path: Path) -> None:
    import dlt
    import pandas as pd
    import pyarrow as pa

    @dlt.resource(name="dicts")
    def dicts():  # noqa: ANN202
        yield [{"a": 1, "kids": [{"b": 1}, {"b": 2}]}, {"a": 2, "kids": []}]

    @dlt.resource(name="arrow")
    def arrow():  # noqa: ANN202
        yield pa.table({"a": [1, 2, 3]})

    @dlt.resource(name="frame")
    def frame():  # noqa: ANN202
        yield pd.DataFrame({"a": [1, 2]})

    @dlt.resource(name="scalars")
    def scalars():  # noqa: ANN202
        yield from [1, 2]

    stamps = _load(tmp_path, dicts, arrow, frame, scalars)
    assert set(stamps) == {"dicts", "dicts__kids", "arrow", "frame", "scalars"}
    for table, values in stamps.items():
        assert {v.astimezone(UTC) for v in values} == {AT}, table


def test_a_column_of_that_name_is_overwritten(tmp_path: Path) -> None:
    import dlt
    import pyarrow as pa

    @dlt.resource(name="arrow")
    def arrow():  # noqa: ANN202
        yield pa.table({"a": [1], "loaded_at": [datetime(2000, 1, 1, tzinfo=UTC)]})

    @dlt.resource(name="dicts")
    def dicts():  # noqa: ANN202
        yield {"a": 1, "loaded_at": datetime(2000, 1, 1, tzinfo=UTC)}

    stamps = _load(tmp_path, arrow, dicts)
    assert {t: {v.astimezone(UTC) for v in vs} for t, vs in stamps.items()} == {
        "arrow": {AT}, "dicts": {AT},
    }  # fmt: skip
