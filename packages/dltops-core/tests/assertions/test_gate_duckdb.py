"""The assertion gate inside real runs on DuckDB: quarantine, order independence, thresholds,
warn counts, package scoping, state rewind and a third-party type."""

from __future__ import annotations

import json
from types import ModuleType

import duckdb
import pytest
from structlog.testing import capture_logs

from dlt_ops import hookimpl
from dlt_ops.errors import AssertionFailedError, QuarantineWriteError

from .conftest import rows

REJECTED = (
    "SELECT resource_name, assertion_type, violation, row_json, run_id, source_section, "
    "pipeline_name, assertion_params FROM ds._dlt_rejected ORDER BY row_json, assertion_type"
)


def _summary(logs: list[dict]) -> dict:
    (line,) = [e for e in logs if e["event"] == "assertions.summary"]
    return line["resources"]


def test_quarantine_diverts_bad_rows_and_loads_good_ones(make_project) -> None:
    p = make_project().configure("""
        [sources.src.dlt_ops.assertions.events]
        required_columns = { value = ["id", "kind"], on_failure = "quarantine" }
        unique_columns = { value = ["id"], on_failure = "quarantine" }
    """)
    p.data(rows(1, 2, 3) + rows(3) + rows(4, kind=None))
    with capture_logs() as logs:
        outcome = p.run()
    assert outcome.ok, outcome.error
    assert p.duck("SELECT id FROM ds.events ORDER BY id") == [(1,), (2,), (3,)]
    rejected = p.duck(REJECTED)
    assert [(r[1], r[2]) for r in rejected] == [
        ("unique_columns", "duplicate key id=3"),
        ("required_columns", "missing required column(s): kind"),
    ]
    assert json.loads(rejected[0][3]) == {"id": 3, "kind": "a"}
    assert json.loads(rejected[1][3]) == {"id": 4}
    assert {(r[0], r[5], r[6]) for r in rejected} == {("events", "src", "src_pipeline")}
    assert json.loads(rejected[0][7]) == {"value": ["id"]}
    joined = p.duck(
        "SELECT count(*) FROM ds._dlt_rejected r JOIN ds._dlt_ops_runs u ON r.run_id = u.run_id "
        "WHERE u.status = 'completed'"
    )
    assert joined == [(2,)] and rejected[0][4] == outcome.record.run_id
    assert _summary(logs)["events"] | {"violations": None} == {
        "records_in": 5, "rejected": 2, "warned": 0, "failed": 0, "batch_warnings": 0,
        "violations": None,
    }  # fmt: skip


@pytest.mark.parametrize("fail_first", [True, False])
def test_fail_wins_over_quarantine_whatever_the_order(make_project, fail_first) -> None:
    fail = 'unique_columns = { value = ["id"], on_failure = "fail" }'
    quarantine = 'required_columns = { value = ["kind"], on_failure = "quarantine" }'
    first, second = (fail, quarantine) if fail_first else (quarantine, fail)
    p = make_project().configure(f"""
        [sources.src.dlt_ops.assertions.events]
        {first}
        {second}
    """)
    p.data(rows(1, 2) + rows(2, kind=None))  # the duplicate also lacks "kind"
    outcome = p.run()
    assert isinstance(outcome.error, AssertionFailedError)
    assert str(outcome.error) == (
        "assertion 'unique_columns' failed on src.events: duplicate key id=2"
    )
    assert outcome.record.status == "failed"
    tables = {t for (t,) in p.duck("SELECT table_name FROM information_schema.tables")}
    assert "events" not in tables and "_dlt_rejected" not in tables


def test_thresholds_turn_row_failures_into_counts(make_project) -> None:
    p = make_project().configure("""
        [sources.src.dlt_ops.assertions.events]
        max_violations = 2
        required_columns = ["kind"]
    """)
    p.data(rows(1, 2, 3) + rows(4, 5, kind=None))
    with capture_logs() as logs:
        assert p.run().ok
    assert p.duck("SELECT count(*) FROM ds.events") == [(5,)]
    assert _summary(logs)["events"]["failed"] == 2
    p.data(rows(6) + rows(7, 8, 9, kind=None))
    outcome = p.run()
    assert isinstance(outcome.error, AssertionFailedError)
    assert "3 of 4 row(s) violated, exceeding max_violations 2" in str(outcome.error)
    p.configure("""
        [sources.src.dlt_ops.assertions.events]
        required_columns = { value = ["kind"], max_violation_ratio = 0.8 }
    """)
    assert p.run().ok  # 3 of 4 = 0.75 <= 0.8
    assert p.duck("SELECT count(*) FROM ds.events") == [(9,)]


def test_warn_logs_the_first_five_and_counts_all(make_project) -> None:
    p = make_project().configure("""
        [sources.src.dlt_ops.assertions.events]
        on_failure = "warn"
        required_columns = ["kind"]
        min_rows_per_load = 100
    """)
    p.data(rows(*range(1, 9), kind=None))
    with capture_logs() as logs:
        assert p.run().ok
    warned = [e for e in logs if e["event"].startswith("assertion 'required_columns' warn")]
    assert len(warned) == 5
    assert any("row count 8 is below min_rows_per_load 100" in e["event"] for e in logs)
    summary = _summary(logs)["events"]
    assert (summary["warned"], summary["batch_warnings"]) == (8, 1)
    assert p.duck("SELECT count(*) FROM ds.events") == [(8,)]


def test_fail_drops_only_this_runs_package_never_an_earlier_pending_one(make_project) -> None:
    p = make_project()
    p.data(rows(1, 2, 3))
    with duckdb.connect(str(p.root / "src_pipeline.duckdb")) as con:
        con.execute("CREATE SCHEMA ds")
        con.execute("CREATE TABLE ds.events (id BIGINT CHECK (id < 2), kind VARCHAR, "
                    "_dlt_load_id VARCHAR NOT NULL, _dlt_id VARCHAR NOT NULL)")  # fmt: skip
    first = p.run()
    assert first.error is not None and first.record.status == "failed"  # failed at load
    pending = first_pipeline_pending = _pending(p)
    assert len(pending) == 1
    p.configure("[sources.src.dlt_ops.assertions.events]\nmin_rows_per_load = 100\n")
    p.data(rows(10, 11))
    second = p.run()
    assert isinstance(second.error, AssertionFailedError)
    assert _pending(p) == first_pipeline_pending  # the earlier package is still there
    assert _extracted(p) == []  # and this run's package is gone


def _pipeline(p):  # noqa: ANN001, ANN202
    import dlt

    from dlt_ops.runner.pipeline import pipelines_dir

    return dlt.attach("src_pipeline", pipelines_dir=str(pipelines_dir(p.root) / "duckdb" / "ds"))


def _pending(p) -> list[str]:  # noqa: ANN001
    return list(_pipeline(p).list_normalized_load_packages())


def _extracted(p) -> list[str]:  # noqa: ANN001
    return list(_pipeline(p).list_extracted_load_packages())


def test_failed_run_rewinds_incremental_state(make_project) -> None:
    p = make_project().configure("[sources.src.dlt_ops.assertions.events]\nmin_rows_per_load = 5\n")
    p.data(rows(1, 2, 3))
    assert isinstance(p.run().error, AssertionFailedError)
    p.configure()  # assertions removed: the same rows must still load
    assert p.run().ok
    assert p.duck("SELECT id FROM ds.events ORDER BY id") == [(1,), (2,), (3,)]


def test_quarantine_write_failure_fails_the_run_before_load(make_project) -> None:
    p = make_project().configure("""
        [sources.src.dlt_ops.assertions.events]
        unique_columns = { value = ["id"], on_failure = "quarantine" }
    """)
    with duckdb.connect(str(p.root / "src_pipeline.duckdb")) as con:
        con.execute("CREATE SCHEMA ds")
        con.execute("CREATE TABLE ds._dlt_rejected (unrelated INTEGER)")
    p.data(rows(1, 1, 2))
    outcome = p.run()
    assert isinstance(outcome.error, QuarantineWriteError)
    assert outcome.record.error_summary.startswith("QuarantineWriteError: failed to write 1 ")
    tables = {t for (t,) in p.duck("SELECT table_name FROM information_schema.tables")}
    assert "events" not in tables
    assert _extracted(p) == []


class EvenIds:
    """A third-party row type: ids must be even."""

    name = "even_ids"
    row_scoped = True

    def check_config(self, params, ctx):  # noqa: ANN001, ANN201
        return [] if set(params) <= {"value"} else ["even_ids takes no parameters"]

    def start(self, params):  # noqa: ANN001, ANN201
        return None

    def observe(self, state, row, params):  # noqa: ANN001, ANN201
        return None if row["id"] % 2 == 0 else f"id {row['id']} is odd"

    def finalize(self, state, params):  # noqa: ANN001, ANN201
        return None


def test_third_party_type_from_an_inline_plugin(make_project) -> None:
    from dlt_ops.plugins import PluginRegistry

    @hookimpl
    def dlt_ops_register_assertion_rules(register) -> None:  # noqa: ANN001
        register(EvenIds, name="even_ids")

    plugin = ModuleType("tests_even_ids_plugin")
    plugin.dlt_ops_register_assertion_rules = dlt_ops_register_assertion_rules  # type: ignore[attr-defined]
    registry = PluginRegistry()
    registry.add_plugin(plugin, name="even_ids", kind="assertion_rule")
    p = make_project().configure("""
        [sources.src.dlt_ops.assertions.events]
        even_ids = { value = true, on_failure = "quarantine" }
    """)
    p.data(rows(1, 2, 3, 4))
    outcome = p.run(registry=registry)
    assert outcome.ok, outcome.error
    assert p.duck("SELECT id FROM ds.events ORDER BY id") == [(2,), (4,)]
    assert [r[2] for r in p.duck(REJECTED)] == ["id 1 is odd", "id 3 is odd"]
