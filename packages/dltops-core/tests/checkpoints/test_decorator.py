"""The decorator's contract: decoration-time checks, isolation, parsing, failure policy."""

from __future__ import annotations

import os
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


def _checkpoint_statuses(database: Path) -> list[tuple[Any, ...]]:
    """The distinct statuses of the checkpoint rows in a DuckDB file."""
    import duckdb

    with duckdb.connect(str(database)) as conn:
        return conn.execute("SELECT DISTINCT status FROM ds._dlt_custom_checkpoints").fetchall()


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


def _run_stand_in(tmp_path: Path, *, has_adapter: bool = True) -> Any:
    """What the manager reads of a dlt-ops run (``current_run()``): the runner's own
    ``RunContext`` needs a whole project; its session here is a real one on the DuckDB file."""
    from types import SimpleNamespace

    from dlt_ops.adapters import ConnectionTarget, DestinationSession
    from dltops_duckdb.adapter import DuckDBAdapter

    opened: list[Any] = []

    def open_session() -> Any:
        target = ConnectionTarget("duckdb", "ds", tmp_path, credentials="ck.duckdb")
        opened.append(DestinationSession.open(DuckDBAdapter(), target))
        return opened[-1]

    return SimpleNamespace(
        run_id="ledger-run-1", pipeline_name="ledger_pipeline", opened=opened,
        open_session=open_session, registry=SimpleNamespace(names=lambda group: [f"<{group}>"]),
        target=SimpleNamespace(has_adapter=has_adapter, engine="duckdb"),
    )  # fmt: skip


def test_inside_a_dlt_ops_run_rows_use_the_runs_session_and_carry_its_ids(
    ck: Any, duck: Any, make_pipeline: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dlt_ops.adapters import DestinationSession
    from dlt_ops.runner.context import active_run

    closed: list[Any] = []
    close = DestinationSession.close
    monkeypatch.setattr(DestinationSession, "close", lambda s: (closed.append(s), close(s)))
    run = _run_stand_in(tmp_path)
    with active_run(run):
        assert _run(make_pipeline(duck), ck.resource(ck.FakeApi(rows=ck.hourly_rows(6)))) is None
    assert len(run.opened) == 1 and closed == []  # the run's session, left to the run to close
    rows = duck.query(
        "SELECT DISTINCT pipeline_name, ledger_run_id, status FROM ds._dlt_custom_checkpoints"
    )
    assert rows == [("ledger_pipeline", "ledger-run-1", "completed")]
    run.opened[0].close()


def test_inside_a_dlt_ops_run_on_a_core_tier_destination_the_manager_refuses(
    ck: Any, duck: Any, make_pipeline: Any, tmp_path: Path
) -> None:
    from dlt_ops.runner.context import active_run

    api = ck.FakeApi()
    with active_run(_run_stand_in(tmp_path, has_adapter=False)):
        exc = _run(make_pipeline(duck), ck.resource(api))
    (found,) = [e for e in _chain(exc) if isinstance(e, UnregisteredDestinationError)]
    assert (found.pipeline, found.destination, found.feature) == (
        "ledger_pipeline", "duckdb", "checkpoints (@with_checkpoints)",
    )  # fmt: skip
    assert "Registered adapters: <destination>." in str(found)
    assert api.calls == 0


def test_outside_dlt_ops_the_session_the_manager_opened_is_closed(
    ck: Any, duck: Any, make_pipeline: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dlt_ops.adapters import DestinationSession

    closed: list[DestinationSession] = []
    close = DestinationSession.close

    def counting(session: DestinationSession) -> None:
        closed.append(session)
        close(session)

    monkeypatch.setattr(DestinationSession, "close", counting)
    assert _run(make_pipeline(duck), ck.resource(ck.FakeApi())) is None
    assert len(closed) == 1  # its own connection, not left open after the resource finished


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


def test_outside_dlt_ops_the_adapter_is_handed_the_pipeline_and_the_project_root(
    ck: Any, duck: Any, make_pipeline: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    installed_adapter: Any,
) -> None:  # fmt: skip
    """What the engine's adapter is given to connect outside a run: the engine, the pipeline's
    dataset and name, dlt's credentials, and the project root (``DLT_PROJECT_DIR``, else the
    working directory), against which an adapter resolves relative paths."""
    from dltops_duckdb.adapter import DuckDBAdapter

    seen: list[Any] = []

    class RecordingDuckDB(DuckDBAdapter):
        def connect(self, target: Any) -> Any:
            seen.append(target)
            return super().connect(target)

    installed_adapter(RecordingDuckDB)
    project, cwd = tmp_path / "project", tmp_path / "cwd"
    project.mkdir()
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("DLT_PROJECT_DIR", str(project))
    assert _run(make_pipeline(duck, name="seen"), ck.resource(ck.FakeApi())) is None
    monkeypatch.delenv("DLT_PROJECT_DIR")
    assert _run(make_pipeline(duck, name="seen"), ck.resource(ck.FakeApi())) is None
    assert [(t.destination, t.dataset, t.pipeline_name, t.project_root) for t in seen] == [
        ("duckdb", "ds", "seen", project), ("duckdb", "ds", "seen", cwd),
    ]  # fmt: skip
    assert all(str(tmp_path / "ck.duckdb") in str(t.credentials) for t in seen)  # dlt's own


def test_iterated_by_hand_in_a_pipelines_context_credentials_are_pipeline_scoped_first(
    ck: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resource iterated by hand while its pipeline is active (a notebook): no extract step
    put the pipeline's section in dlt's context, and the lookup is still the pipeline's own."""
    scoped, decoy = tmp_path / "scoped.duckdb", tmp_path / "decoy.duckdb"
    monkeypatch.setenv("BY_HAND_PIPELINE__DESTINATION__DUCKDB__CREDENTIALS", str(scoped))
    monkeypatch.setenv("DESTINATION__DUCKDB__CREDENTIALS", str(decoy))
    dlt.pipeline(
        pipeline_name="by_hand_pipeline",
        destination="duckdb",
        dataset_name="ds",
        pipelines_dir=str(tmp_path / "pipelines"),
    )
    assert list(ck.resource(ck.FakeApi()))
    assert _checkpoint_statuses(scoped) == [("completed",)]
    assert not decoy.exists()


def test_a_checkpointed_generator_called_by_hand_resolves_credentials_pipeline_scoped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``@with_checkpoints`` generator that is no resource, iterated by the user's own loop
    while a pipeline is active: no dlt resource puts the pipeline's name in dlt's section
    context, so the manager's own lookup must (``PIPELINE__DESTINATION__...`` first)."""
    scoped, decoy = tmp_path / "scoped.duckdb", tmp_path / "decoy.duckdb"
    monkeypatch.setenv("PLAIN_PIPELINE__DESTINATION__DUCKDB__CREDENTIALS", str(scoped))
    monkeypatch.setenv("DESTINATION__DUCKDB__CREDENTIALS", str(decoy))
    dlt.pipeline(pipeline_name="plain_pipeline", destination="duckdb", dataset_name="ds",
                 pipelines_dir=str(tmp_path / "pipelines"))  # fmt: skip

    @with_checkpoints(cursor_field="n", frequency=1)
    def numbers(n: Any = None) -> Any:
        for i in range(3):
            yield [{"n": i}]

    assert len(list(numbers(n=dlt.sources.incremental("n", initial_value=0)))) == 3
    assert _checkpoint_statuses(scoped) == [("completed",)]
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
    # the refusal names the pipeline, the feature and the adapters there are
    assert (found[0].pipeline, found[0].feature) == (
        "ck_pipeline",
        "checkpoints (@with_checkpoints)",
    )
    registered = str(found[0]).split("Registered adapters: ", 1)[1].split(".", 1)[0]
    assert "duckdb" in registered.split(", ")
    assert api.calls == 0


def test_outside_a_pipeline_or_without_a_destination_the_refusal_says_what_to_do() -> None:
    from types import SimpleNamespace

    from dlt_ops.checkpoints.manager import _own_session

    with pytest.raises(CheckpointStateError) as outside:
        _own_session(None)
    assert str(outside.value) == (
        "@with_checkpoints runs outside any dlt pipeline context: run the resource through "
        "a dlt pipeline (`pipeline.run(...)`) or `dlt-ops pipeline run`."
    )
    with pytest.raises(CheckpointStateError, match="pipeline 'bare' has no destination"):
        _own_session(SimpleNamespace(pipeline_name="bare", destination=None))


# -- the manager on a real DuckDB session (resume, completion, retention, failure lines) --------


class _Failing:
    """A real session whose statements containing ``needle`` raise (a destination that
    refuses one statement); everything else reaches DuckDB."""

    def __init__(self, session: Any, needle: str) -> None:
        self._session, self._needle = session, needle

    def execute(self, stmt: Any, *params: Any) -> int:
        if self._needle in stmt.text:
            raise RuntimeError(f"refused: {self._needle} password=hunter2")
        return self._session.execute(stmt, *params)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


@pytest.fixture
def manager(tmp_path: Path) -> Any:
    """``manager(run_id)``: a manager of resource ``events`` in pipeline ``p`` on a DuckDB
    session, its table created; ``manager.rows()`` reads the table back."""
    from dlt_ops.adapters import ConnectionTarget, DestinationSession
    from dlt_ops.checkpoints.manager import CheckpointManager
    from dltops_duckdb.adapter import DuckDBAdapter

    target = ConnectionTarget("duckdb", "ds", tmp_path, credentials="ck.duckdb")
    session = DestinationSession.open(DuckDBAdapter(), target)
    made: list[Any] = []

    def build(run_id: str | None = "ns", **opts: Any) -> Any:
        m = CheckpointManager(
            "events", run_id, frequency=opts.pop("frequency", 2),
            checkpoint_table="_dlt_custom_checkpoints", cleanup_days=opts.pop("cleanup_days", 7),
        )  # fmt: skip
        m.session, m.pipeline_name = session, opts.pop("pipeline", "p")
        m._create_table()
        made.append(m)
        return m

    build.session = session  # type: ignore[attr-defined]
    yield build
    for m in made:
        m.close()
    session.close()


def _insert(session: Any, *rows: tuple[Any, ...]) -> None:
    """Rows ``(pipeline, resource, run_id, value, page, status, created_at)``."""
    from dlt_ops.checkpoints.table import table_spec

    full = [(p, r, ns, v, page, (page or 0) * 10, st, at, at, None)
            for p, r, ns, v, page, st, at in rows]  # fmt: skip
    session.insert_rows(table_spec("_dlt_custom_checkpoints"), full)


def _table(session: Any) -> list[tuple[Any, ...]]:
    from dlt_ops.adapters import Statement

    return session.query(Statement(
        "SELECT pipeline_name, resource_name, run_id, checkpoint_value, status "
        "FROM {_dlt_custom_checkpoints} ORDER BY 1, 2, 3, 4"
    ))  # fmt: skip


def _at(hours: float) -> Any:
    from datetime import UTC, datetime, timedelta

    return datetime.now(UTC) - timedelta(hours=hours)


def test_resume_reads_only_its_own_namespace_and_picks_the_furthest_cursor(manager: Any) -> None:
    m = manager("ns")
    _insert(
        m.session,
        ("p", "events", "ns", "9", 1, "active", _at(3)),
        ("p", "events", "ns", "10", 5, "active", _at(2)),  # the furthest as a number
        ("p", "events", "ns", "99", 9, "completed", _at(1)),  # finished: not a resume point
        ("p", "events", "other", "50", 1, "active", _at(1)),  # another namespace
        ("p", "events", None, "60", 1, "active", _at(1)),  # the NULL namespace
        ("p", "users", "ns", "70", 1, "active", _at(1)),  # another resource
        ("q", "events", "ns", "80", 1, "active", _at(1)),  # another pipeline
    )
    assert m.resume_value(like=0) == ("10", 10)  # parsed like the incremental's int
    assert m.resume_value() == ("9", "9")  # no hint: stored text compares as text
    assert m.resume_value(parser=int) == ("10", 10)  # the decorator's value_parser wins
    assert m.resume_value(like=0, pick=min) == ("9", 9)  # a descending cursor's furthest
    assert manager(None).resume_value(like=0) == ("60", 60)  # NULL run_id reads NULL rows only
    assert manager("empty").resume_value(like=0) is None


def test_resume_of_incomparable_values_takes_the_newest_row(manager: Any) -> None:
    m = manager("ns")
    mixed = {"old": 1, "new": "x", "tie-low": 2, "tie-high": "y"}.get
    _insert(
        m.session,
        ("p", "events", "ns", "old", 1, "active", _at(5)),
        ("p", "events", "ns", "new", 2, "active", _at(4)),
    )
    assert m.resume_value(parser=mixed) == ("new", "x")  # int vs str: the newest row
    at = _at(1)  # two rows of one instant: the higher page wins
    _insert(
        m.session,
        ("p", "events", "ns", "tie-low", 3, "active", at),
        ("p", "events", "ns", "tie-high", 7, "active", at),
    )
    assert m.resume_value(parser=mixed) == ("tie-high", "y")
    later = _at(0.5)  # a row without a page number counts as page 0
    _insert(
        m.session,
        ("p", "events", "ns", "no-page", None, "active", later),
        ("p", "events", "ns", "page-1", 1, "active", later),
    )
    assert m.resume_value(parser={"no-page": 3, "page-1": "z"}.get) == ("page-1", "z")


def test_unreadable_resume_state_names_the_cause(manager: Any) -> None:
    m = manager("ns")
    _insert(m.session, ("p", "events", "ns", "not-a-number", 1, "active", _at(1)))
    with pytest.raises(CheckpointStateError, match="invalid literal for int"):
        m.resume_value(like=0)  # a stored value that does not parse as the cursor's type
    m.session.execute(_stmt("DROP TABLE {_dlt_custom_checkpoints}"))
    m.session.execute(_stmt("CREATE TABLE {_dlt_custom_checkpoints} (unrelated INTEGER)"))
    with pytest.raises(CheckpointStateError, match="failed to read resume state") as refused:
        m.resume_value(like=0)
    assert "BinderException" in str(refused.value)  # the destination's own error, quoted


def test_a_destination_that_cannot_say_whether_the_table_exists_never_starts_fresh(
    manager: Any,
) -> None:
    class Unreachable(_Failing):  # the connection is gone: every read fails
        def query(self, stmt: Any, *params: Any) -> Any:
            raise RuntimeError("connection lost")

        def fetch_columns(self, table: str) -> Any:
            raise RuntimeError("connection lost")

    m = manager("ns")
    _insert(m.session, ("p", "events", "ns", "5", 1, "active", _at(1)))
    m.session = Unreachable(m.session, "-")
    with pytest.raises(CheckpointStateError, match="failed to read resume state") as refused:
        m.resume_value(like=0)  # not "no table, start from the beginning"
    assert "connection lost" in str(refused.value)


def test_a_table_that_cannot_be_created_refuses_with_the_cause(manager: Any) -> None:
    class Refusing(_Failing):
        def ensure_table(self, spec: Any) -> None:
            raise RuntimeError("no CREATE privilege password=hunter2")

    m = manager("ns")
    m.session = Refusing(m.session, "-")
    with pytest.raises(CheckpointStateError, match="Failed to initialize") as refused:
        m._create_table()
    assert "no CREATE privilege password=***" in str(refused.value)
    assert m.session is None  # released before the refusal


def _stmt(text: str) -> Any:
    from dlt_ops.adapters import Statement

    return Statement(text)


def test_complete_retires_only_its_namespace_and_applies_retention(
    manager: Any, logs: list
) -> None:
    m = manager("ns", cleanup_days=7)
    days = 24
    _insert(
        m.session,
        ("p", "events", "ns", "a-active", 1, "active", _at(1)),
        ("p", "events", "other", "b-active", 1, "active", _at(1)),
        ("p", "events", None, "c-active", 1, "active", _at(1)),
        ("p", "events", "x", "d-old", 1, "completed", _at(30 * days)),  # retention deletes
        ("p", "events", "x", "e-recent", 1, "completed", _at(6 * days)),  # inside 7 days
        ("p", "events", "x", "f-old-active", 1, "active", _at(30 * days)),  # never deleted
        ("p", "users", "x", "g-old", 1, "completed", _at(30 * days)),  # another resource
        ("q", "events", "x", "h-old", 1, "completed", _at(30 * days)),  # another pipeline
    )
    m.complete()
    assert _table(m.session) == [
        ("p", "events", "ns", "a-active", "completed"),
        ("p", "events", "other", "b-active", "active"),
        ("p", "events", "x", "e-recent", "completed"),
        ("p", "events", "x", "f-old-active", "active"),
        ("p", "events", None, "c-active", "active"),
        ("p", "users", "x", "g-old", "completed"),
        ("q", "events", "x", "h-old", "completed"),
    ]
    info = {e["event"]: e for e in logs if e["log_level"] == "info"}
    assert info["[events] Checkpoints marked as completed"]["resource"] == "events"
    cleaned = info["[events] Cleaned up checkpoints older than 7 days"]
    assert (cleaned["resource"], cleaned["deleted"]) == ("events", 1)
    manager(None).complete()  # the NULL namespace completes its own rows only
    assert ("p", "events", None, "c-active", "completed") in _table(m.session)
    assert ("p", "events", "other", "b-active", "active") in _table(m.session)


@pytest.mark.parametrize(
    ("needle", "level", "line"),
    [
        ("UPDATE", "error", "[events] Failed to mark checkpoints as completed (refused: UPDATE "
         "password=***); they stay active until the next clean finish or `dlt-ops checkpoints "
         "cleanup`."),
        ("DELETE", "warning", "[events] Checkpoint retention cleanup failed (refused: DELETE "
         "password=***)"),
    ],
)  # fmt: skip
def test_a_failed_completion_or_retention_is_logged_redacted(
    manager: Any, logs: list, needle: str, level: str, line: str
) -> None:
    m = manager("ns")
    m.session = _Failing(m.session, needle)
    m.complete()  # logged, never raised: the extract itself succeeded
    (event,) = [e for e in logs if e["log_level"] == level]
    assert (event["event"], event["resource"]) == (line, "events")
    if needle == "UPDATE":  # retention is not tried after a failed completion
        assert not [e for e in logs if "Cleaned up" in e["event"]]


def test_pages_queue_a_checkpoint_every_frequency_pages_with_running_counts(
    manager: Any, logs: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    import structlog

    from dlt_ops.adapters import Statement
    from dlt_ops.checkpoints import writer

    monkeypatch.setattr(writer, "log", structlog.get_logger(writer.__name__))

    m = manager("ns", frequency=2)
    m.page(3, 30)
    assert m.writer is None  # page 1 of 2: nothing queued yet
    m.page(4, 40)
    m.page(5, 50)
    m.page(6, None)  # a boundary without a cursor value: nothing to resume from
    m.page(7, 70)  # page 5
    m.page(1, 80)  # page 6
    m.flush()
    rows = m.session.query(Statement(
        "SELECT resource_name, run_id, checkpoint_value, page_number, records_processed, status "
        "FROM {_dlt_custom_checkpoints} ORDER BY page_number"
    ))  # fmt: skip
    assert rows == [
        ("events", "ns", "40", 2, 7, "active"),
        ("events", "ns", "80", 6, 26, "active"),
    ]
    assert (m.page_count, m.records_count) == (6, 26)
    saved = [(e["event"], e["resource"]) for e in logs if "Checkpoint saved" in e["event"]]
    assert saved == [
        ("[events] Checkpoint saved: page 2, 7 records, value: 40", "events"),
        ("[events] Checkpoint saved: page 6, 26 records, value: 80", "events"),
    ]


def test_a_destination_without_credentials_is_refused_by_dlts_own_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dlt.common.configuration.exceptions import ConfigFieldMissingException

    from dlt_ops.checkpoints.manager import _own_session

    for name in list(os.environ):
        if "CREDENTIALS" in name.upper():
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)  # no .dlt/secrets.toml here
    pipeline = dlt.pipeline(
        pipeline_name="no_creds", pipelines_dir=str(tmp_path / "p"), destination="postgres"
    )
    # what dlt itself would say, before any connection is tried with half a config
    with pytest.raises(ConfigFieldMissingException, match="credentials"):
        _own_session(pipeline)
