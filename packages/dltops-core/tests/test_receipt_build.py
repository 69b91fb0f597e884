"""Receipt rows from a real dlt run on DuckDB: what came in, was filtered, held back, loaded,
and what it cost; and from runs that stopped before their package could load."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dlt
import pytest

from dlt_ops.errors import ConfigError
from dlt_ops.receipts.build import build_receipts, cost_rates
from dlt_ops.receipts.counting import ResourceTally, Tallies, attach_counters

T0 = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class Gate:
    rejected: int = 0
    warned: int = 0
    failed: int = 0


def _run(tmp_path: Path) -> tuple[Tallies, Any]:
    @dlt.resource(name="orders", primary_key="id")
    def orders(cursor=dlt.sources.incremental("id", initial_value=2)):  # noqa: ANN001, ANN202, B008
        yield [{"id": i, "lines": [{"n": 1}, {"n": 2}]} for i in range(1, 5)]

    @dlt.resource(name="notes")
    def notes():  # noqa: ANN202
        yield [{"t": "a"}, {"t": "b"}]
        yield {"t": "c"}

    @dlt.source(name="shop")
    def shop():  # noqa: ANN202
        return orders, notes

    tallies = Tallies()
    pipeline = dlt.pipeline(
        pipeline_name="receipt_build",
        pipelines_dir=str(tmp_path / "pipelines"),
        destination=dlt.destinations.duckdb(str(tmp_path / "shop.duckdb")),
        dataset_name="ds",
    )
    pipeline.run(attach_counters(shop(), tallies))
    return tallies, pipeline.last_trace


def _receipts(tallies: Tallies, trace: Any, phase: str, **kwargs: Any) -> dict[str, Any]:
    rows = build_receipts(
        run_id="r1", run_started_at=T0, pipeline_name="p", source="shop", tallies=tallies,
        verdicts=kwargs.pop("verdicts", {}), trace=trace, phase=phase,
        rates=kwargs.pop("rates", {}), **kwargs,
    )  # fmt: skip
    return {r.resource_name: r for r in rows}


def test_a_completed_run_books_what_it_loaded(tmp_path: Path) -> None:
    tallies, trace = _run(tmp_path)
    rows = _receipts(tallies, trace, "done", verdicts={"orders": Gate(rejected=0, warned=1)})
    orders, notes = rows["orders"], rows["notes"]
    assert list(rows) == ["notes", "orders"]  # sorted by resource
    assert (orders.records_in, orders.filtered, orders.records_out) == (4, 1, 3)
    assert (orders.rows_loaded, orders.child_rows_loaded) == (3, 6)
    assert (orders.failed, orders.warned, orders.rejected) == (0, 1, 0)
    assert (notes.records_in, notes.pages, notes.records_out, notes.rows_loaded) == (3, 2, 3, 3)
    assert orders.run_id == "r1" and orders.source_section == "shop"
    assert orders.pipeline_name == "p" and orders.run_started_at == T0
    for step in (orders.extract_s, orders.normalize_s, orders.load_s):
        assert step is not None and step >= 0
    assert orders.cost is None and orders.failure_reason is None


def test_a_failure_within_tolerance_loaded_and_counts_as_warned(tmp_path: Path) -> None:
    tallies, trace = _run(tmp_path)
    rows = _receipts(tallies, trace, "done", verdicts={"orders": Gate(warned=1, failed=2)})
    assert (rows["orders"].failed, rows["orders"].warned) == (0, 3)


def test_a_run_stopped_at_the_gates_holds_back_all_that_passed(tmp_path: Path) -> None:
    tallies, trace = _run(tmp_path)
    rows = _receipts(
        tallies, trace, "gates", verdicts={"orders": Gate(rejected=1, failed=2)},
        failure="assertion failed",
    )  # fmt: skip
    orders = rows["orders"]
    assert (orders.records_out, orders.rows_loaded, orders.child_rows_loaded) == (0, 0, 0)
    assert (orders.rejected, orders.failed) == (1, 2)  # 3 passed, 1 quarantined
    assert rows["notes"].failed == 3
    assert orders.failure_reason == "assertion failed"


def test_a_run_that_died_in_load_books_what_its_package_holds(tmp_path: Path) -> None:
    tallies, trace = _run(tmp_path)
    rows = _receipts(tallies, trace, "load")
    assert (rows["orders"].records_out, rows["orders"].failed) == (3, 0)
    assert rows["orders"].rows_loaded == 0  # not known to have landed


def test_held_back_is_never_negative() -> None:
    tallies = Tallies({"r": ResourceTally(records_in=2, pages=1, passed=1)})
    rows = _receipts(tallies, None, "extract", verdicts={"r": Gate(rejected=3)})
    assert rows["r"].failed == 0


def test_costs_estimated_measured_and_mixed(tmp_path: Path) -> None:
    tallies, trace = _run(tmp_path)
    est = _receipts(tallies, trace, "done", rates={"per_record": 0.5, "per_page": 2.0})
    assert est["orders"].cost == pytest.approx(0.5 * 4 + 2.0 * 1)
    assert est["orders"].cost_basis == "estimated" and est["orders"].cost_measured is None
    measured = _receipts(tallies, trace, "done", measured_cost=12.0)
    # split by rows loaded: orders 3 + 6 child rows, notes 3
    assert measured["orders"].cost == pytest.approx(9.0)
    assert measured["notes"].cost == pytest.approx(3.0)
    assert measured["orders"].cost_basis == "measured"
    assert measured["orders"].cost_estimated is None
    mixed = _receipts(tallies, trace, "done", rates={"per_page": 1.0}, measured_cost=12.0)
    assert mixed["notes"].cost == pytest.approx(3.0 + 2.0)
    assert mixed["notes"].cost_basis == "mixed"
    nothing_loaded = _receipts(tallies, None, "extract", measured_cost=4.0)
    assert nothing_loaded["orders"].cost == pytest.approx(2.0)  # split evenly


def test_cost_rates_are_checked() -> None:
    assert cost_rates({"per_record": 1, "per_page": 0.5}, "s") == {
        "per_record": 1.0, "per_page": 0.5,
    }  # fmt: skip
    assert cost_rates({}, "s") == {}
    assert cost_rates({"per_page": 0}, "s") == {"per_page": 0.0}
    with pytest.raises(ConfigError, match=r"\[sources.s.dlt_ops.cost\] per_row: unknown key"):
        cost_rates({"per_row": 1}, "s")
    for bad in (-1, True, "1"):
        with pytest.raises(ConfigError, match="must be a non-negative number"):
            cost_rates({"per_record": bad}, "s")


def test_a_dead_runs_settled_receipt_books_what_landed_in_each_root_table() -> None:
    from dlt_ops.receipts.build import settled_receipts
    from dlt_ops.receipts.model import ReceiptRow

    rows = settled_receipts(
        run_id="r1", run_started_at=T0, pipeline_name="shop_pipeline", source="shop",
        tables={"orders": "orders", "notes": "shop_notes", "empty": "empty"},
        # orders_archive is another table, not a child of orders (children are orders__<field>)
        loaded_tables={"orders": 3, "orders__lines": 6, "orders__lines__tags": 2,
                       "orders_archive": 99, "shop_notes": 2},
    )  # fmt: skip
    common = {"run_id": "r1", "run_started_at": T0, "pipeline_name": "shop_pipeline",
              "source_section": "shop"}  # fmt: skip
    assert rows == [  # by resource name; what landed in the root table is what came in and out
        ReceiptRow(**common, resource_name="empty"),
        ReceiptRow(**common, resource_name="notes", records_in=2, records_out=2, rows_loaded=2),
        ReceiptRow(**common, resource_name="orders", records_in=3, records_out=3, rows_loaded=3,
                   child_rows_loaded=8),
    ]  # fmt: skip


def test_a_run_that_died_in_normalize_books_what_its_package_holds(tmp_path: Path) -> None:
    tallies, trace = _run(tmp_path)
    rows = _receipts(tallies, trace, "normalize")
    assert (rows["orders"].records_out, rows["orders"].failed) == (3, 0)
    assert (rows["notes"].records_out, rows["notes"].rows_loaded) == (3, 0)


def test_the_loaded_books_and_root_tables_win_over_the_trace(tmp_path: Path) -> None:
    tallies, trace = _run(tmp_path)
    rows = _receipts(
        tallies, trace, "done", tables={"orders": "orders", "notes": "shop_notes"},
        # what the load step booked: an earlier run's pending package loaded with this one
        loaded_tables={"orders": 5, "orders__lines": 1, "shop_notes": 7, "notes": 100},
    )  # fmt: skip
    assert (rows["orders"].rows_loaded, rows["orders"].child_rows_loaded) == (5, 1)
    assert (rows["notes"].rows_loaded, rows["notes"].child_rows_loaded) == (7, 0)


def test_a_resource_without_a_verdict_is_neither_warned_nor_held_back_twice(
    tmp_path: Path,
) -> None:
    tallies, trace = _run(tmp_path)
    done = _receipts(tallies, trace, "done", verdicts={"orders": Gate(failed=1)})
    assert (done["notes"].warned, done["notes"].failed, done["notes"].rejected) == (0, 0, 0)
    stopped = _receipts(tallies, None, "extract")
    assert (stopped["notes"].warned, stopped["notes"].failed) == (0, 3)


def test_one_rate_alone_estimates_the_cost_and_no_pages_cost_nothing() -> None:
    paged = Tallies({"r": ResourceTally(records_in=4, pages=2, passed=4)})
    per_record = _receipts(paged, None, "extract", rates={"per_record": 0.5})
    assert per_record["r"].cost == pytest.approx(2.0)  # no per_page rate: pages cost nothing
    tallies = Tallies({"r": ResourceTally(records_in=4, pages=0, passed=4)})
    per_page = _receipts(tallies, None, "extract", rates={"per_page": 3.0})
    assert per_page["r"].cost == pytest.approx(0.0) and per_page["r"].cost_basis == "estimated"


def test_a_run_without_a_trace_books_nothing_written_and_holds_back_what_passed() -> None:
    tallies = Tallies({"r": ResourceTally(records_in=4, pages=1, passed=3)})
    for phase in ("normalize", "load"):  # dlt left no trace to read the package from
        row = _receipts(tallies, None, phase)["r"]
        assert (row.records_out, row.rows_loaded, row.failed, row.filtered) == (0, 0, 3, 1)
