"""The decorator's contract: decoration-time checks, isolation, parsing, failure policy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dlt
import pytest

from dlt_ops import with_checkpoints
from dlt_ops.errors import CheckpointStateError, IdentifierError, UnregisteredDestinationError


def _chain(exc: BaseException | None) -> list[BaseException]:
    out = []
    while exc is not None and exc not in out:
        out.append(exc)
        exc = exc.__cause__ or exc.__context__
    return out


def _run(pipeline: Any, resource: Any) -> BaseException | None:
    try:
        pipeline.run(resource)
    except Exception as exc:
        return exc
    return None


# -- decoration time -----------------------------------------------------------------------------


def test_on_top_of_dlt_resource_is_a_type_error_at_decoration() -> None:
    @dlt.resource(name="events")
    def events() -> Any:
        yield [{"id": 1}]

    with pytest.raises(TypeError, match="must be applied under @dlt.resource, not on top of it"):
        with_checkpoints(cursor_field="occurred_at")(events)


@pytest.mark.parametrize(
    "kwargs",
    [{"frequency": 0}, {"frequency": -1}, {"cleanup_days": -1}, {"offset_seconds": -1},
     {"frequency": True}, {"value_parser": 42}],
)  # fmt: skip
def test_out_of_range_options_raise_value_error(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        with_checkpoints(cursor_field="ts", **kwargs)


@pytest.mark.parametrize("name", ['x"; DROP TABLE t;--', "1abc", "a b", ""])
def test_hostile_checkpoint_table_names_are_refused(name: str) -> None:
    with pytest.raises(IdentifierError):
        with_checkpoints(cursor_field="ts", checkpoint_table=name)


def test_under_dlt_resource_keeps_name_and_hints() -> None:
    @dlt.resource(name="events", primary_key="id", write_disposition="merge")
    @with_checkpoints(cursor_field="ts")
    def fetch(ts: Any = dlt.sources.incremental("ts", initial_value=0)) -> Any:  # noqa: B008
        yield []

    assert fetch.name == "events"
    assert fetch.write_disposition == "merge"
    assert fetch.incremental is not None  # dlt still sees the incremental parameter


# -- isolation -----------------------------------------------------------------------------------


def test_rows_are_keyed_by_dlt_resource_name_and_ledger_run_id_is_null_outside_dlt_ops(
    ck: Any, duck: Any, make_pipeline: Any
) -> None:
    assert _run(make_pipeline(duck), ck.resource(ck.FakeApi(), name="gh_events")) is None
    rows = duck.query(
        "SELECT DISTINCT resource_name, ledger_run_id FROM ds._dlt_custom_checkpoints"
    )
    assert rows == [("gh_events", None)]


def test_outside_dlt_ops_credentials_resolve_like_dlt_pipeline_scoped_first(
    ck: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The manager resolves the pipeline's credentials itself (not through a job client): a
    pipeline-scoped setting must still beat the global one, as it does for dlt's own load."""
    scoped, decoy = tmp_path / "scoped.duckdb", tmp_path / "decoy.duckdb"
    monkeypatch.setenv("SCOPED_PIPELINE__DESTINATION__DUCKDB__CREDENTIALS", str(scoped))
    monkeypatch.setenv("DESTINATION__DUCKDB__CREDENTIALS", str(decoy))
    pipeline = dlt.pipeline(
        pipeline_name="scoped_pipeline",
        destination="duckdb",
        dataset_name="ds",
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    assert _run(pipeline, ck.resource(ck.FakeApi())) is None
    import duckdb

    with duckdb.connect(str(scoped)) as conn:
        statuses = conn.execute("SELECT DISTINCT status FROM ds._dlt_custom_checkpoints").fetchall()
        loaded = conn.execute("SELECT COUNT(*) FROM ds.events").fetchall()
    assert statuses == [("completed",)]
    assert loaded[0][0] > 0
    assert not decoy.exists()


def test_iterated_outside_any_pipeline_says_so_before_fetching(ck: Any) -> None:
    from dlt.common.configuration.container import Container
    from dlt.common.pipeline import PipelineContext

    Container()[PipelineContext].deactivate()  # earlier tests left their pipeline active
    api = ck.FakeApi()
    with pytest.raises(Exception) as raised:  # noqa: PT011 - dlt wraps it; the cause is checked
        list(ck.resource(api))
    causes = [e for e in _chain(raised.value) if isinstance(e, CheckpointStateError)]
    assert causes and "outside any dlt pipeline context" in str(causes[0])
    assert api.calls == 0


def test_different_initial_values_are_separate_namespaces(
    ck: Any, duck: Any, make_pipeline: Any
) -> None:
    from datetime import timedelta

    pipeline = make_pipeline(duck)
    api = ck.FakeApi(fail_after=3)
    assert _run(pipeline, ck.resource(api)) is not None  # active checkpoint at 05:00

    @dlt.resource(name="events", primary_key="id", write_disposition="append")
    @with_checkpoints(cursor_field="occurred_at", frequency=2)
    def other_window(
        occurred_at: Any = dlt.sources.incremental(  # noqa: B008
            "occurred_at", initial_value=ck.T0 + timedelta(hours=1)
        ),
    ) -> Any:
        yield from api.pages(occurred_at.start_value)

    api.fail_after = 0
    assert _run(make_pipeline(duck, name="p2"), other_window()) is None
    # the other window did not resume from the first window's checkpoint: it started at 01:00
    assert duck.query("SELECT min(id), count(*) FROM ds.events") == [(2, 19)]


def test_no_initial_value_uses_default_namespace_with_warning(
    ck: Any, duck: Any, make_pipeline: Any, logs: list
) -> None:
    @dlt.resource(name="events")
    @with_checkpoints(cursor_field="occurred_at", frequency=1)
    def fetch(occurred_at: Any = dlt.sources.incremental("occurred_at")) -> Any:  # noqa: B008
        yield from ck.FakeApi(rows=ck.hourly_rows(3)).pages(occurred_at.start_value)

    assert _run(make_pipeline(duck), fetch()) is None
    assert {r[1] for r in ck.rows(duck)} == {"default"}
    assert any("run_id 'default'" in e for e in ck.events(logs, "warning"))


def test_without_incremental_run_id_is_null_and_rows_complete(
    ck: Any, duck: Any, make_pipeline: Any
) -> None:
    @dlt.resource(name="events")
    @with_checkpoints(cursor_field="occurred_at", frequency=2)
    def fetch() -> Any:
        yield from ck.FakeApi(rows=ck.hourly_rows(9)).pages(None)

    assert _run(make_pipeline(duck), fetch()) is None
    assert [(r[1], r[4]) for r in ck.rows(duck)] == [(None, "completed")]


# -- value_parser --------------------------------------------------------------------------------


def test_value_parser_cursor_resumes_exactly_at_checkpoint(duck: Any, make_pipeline: Any) -> None:
    rows = [{"id": i, "seq": i * 10} for i in range(1, 11)]
    state = {"fail_after": 2, "since": []}

    @dlt.resource(name="items", primary_key="id", write_disposition="append")
    @with_checkpoints(cursor_field="seq", frequency=1, value_parser=int)
    def items(seq: Any = dlt.sources.incremental("seq", initial_value=0)) -> Any:  # noqa: B008
        state["since"].append(seq.start_value)
        page = [r for r in rows if r["seq"] >= seq.start_value]
        for n, i in enumerate(range(0, len(page), 2), 1):
            if state["fail_after"] and n > state["fail_after"]:
                raise RuntimeError("boom")
            yield page[i : i + 2]

    pipeline = make_pipeline(duck)
    assert _run(pipeline, items()) is not None  # checkpoints 20 and 40
    state["fail_after"] = 0
    assert _run(pipeline, items()) is None
    assert state["since"] == [0, 40]  # no offset: exactly the checkpoint, as an int
    assert duck.query("SELECT min(seq), count(*) FROM ds.items") == [(40, 7)]


# -- failure policy ------------------------------------------------------------------------------


def test_mid_run_write_failure_logs_error_and_the_run_continues(
    ck: Any, duck: Any, make_pipeline: Any, logs: list
) -> None:
    def drop_table(page: int) -> None:
        if page == 3:  # after the first checkpoint landed, the table disappears
            duck.execute("DROP TABLE ds._dlt_custom_checkpoints")

    api = ck.FakeApi(on_page=drop_table)
    assert _run(make_pipeline(duck), ck.resource(api)) is None
    assert len(duck.query("SELECT id FROM ds.events")) == 20
    errors = ck.events(logs, "error")
    assert any("Failed to save checkpoint at page 4" in e for e in errors)


def test_unreadable_resume_state_fails_before_extract(
    ck: Any, duck: Any, make_pipeline: Any
) -> None:
    duck.execute("CREATE SCHEMA ds")
    duck.execute("CREATE TABLE ds._dlt_custom_checkpoints (unrelated INTEGER)")
    api = ck.FakeApi()
    exc = _run(make_pipeline(duck), ck.resource(api))
    assert any(isinstance(e, CheckpointStateError) for e in _chain(exc))
    assert "failed to read resume state" in str(exc)
    assert api.calls == 0  # the API was never asked for a page


def test_an_existing_table_is_read_without_ddl(
    ck: Any, target: Any, make_pipeline: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The resume read comes first and creates the table only when it finds none: a table
    that exists costs one query, not the idempotent DDL (seconds per statement on BigQuery)."""
    from dlt_ops.adapters import DestinationSession

    assert _run(make_pipeline(target), ck.resource(ck.FakeApi())) is None  # creates the table
    ensured: list[str] = []
    ensure = DestinationSession.ensure_table

    def counting(session: DestinationSession, spec: Any) -> None:
        ensured.append(spec.name)
        ensure(session, spec)

    monkeypatch.setattr(DestinationSession, "ensure_table", counting)
    api = ck.FakeApi()
    assert _run(make_pipeline(target, name="second"), ck.resource(api)) is None
    assert ensured == []
    assert api.served == 7  # the whole window again: the first pipeline's rows are not its own
    statuses = target.query("SELECT DISTINCT status FROM ds._dlt_custom_checkpoints")
    assert statuses == [("completed",)]


@pytest.mark.integration
def test_setup_failure_fails_before_extract(
    ck: Any, postgres_database: Any, make_pipeline: Any
) -> None:
    import psycopg

    # a composite type squats the table's name: CREATE TABLE IF NOT EXISTS fails on PostgreSQL
    with psycopg.connect(postgres_database.url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA ds")
        conn.execute("CREATE TYPE ds._dlt_custom_checkpoints AS (a integer)")
    target = type(
        "T", (), {"destination": dlt.destinations.postgres(credentials=postgres_database.dlt_url)}
    )()
    api = ck.FakeApi()
    exc = _run(make_pipeline(target), ck.resource(api))
    assert any(isinstance(e, CheckpointStateError) for e in _chain(exc)), exc
    assert "Failed to initialize checkpoint table '_dlt_custom_checkpoints'" in str(exc)
    assert api.calls == 0


def test_core_tier_destination_is_refused_at_runtime(
    ck: Any, tmp_path: Path, make_pipeline: Any
) -> None:
    """The backstop: plain dlt (no preflight) on filesystem, which has no adapter."""
    fs = type(
        "T", (), {"destination": dlt.destinations.filesystem(bucket_url=str(tmp_path / "bucket"))}
    )()
    api = ck.FakeApi()
    exc = _run(make_pipeline(fs), ck.resource(api))
    found = [e for e in _chain(exc) if isinstance(e, UnregisteredDestinationError)]
    assert found, exc
    assert "destination 'filesystem' has no registered DestinationAdapter" in str(found[0])
    assert api.calls == 0
