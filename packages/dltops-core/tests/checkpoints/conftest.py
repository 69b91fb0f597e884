"""A paginated fake API and plain-dlt pipelines on real DuckDB / PostgreSQL destinations."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def hourly_rows(n: int = 20) -> list[dict[str, Any]]:
    """``n`` rows, one per hour from ``T0``."""
    return [{"id": i + 1, "occurred_at": T0 + timedelta(hours=i)} for i in range(n)]


@dataclass
class FakeApi:
    """Serves ``rows`` with ``occurred_at >= since``, ``page_size`` per page; can die mid-way."""

    rows: list[dict[str, Any]] = field(default_factory=hourly_rows)
    page_size: int = 3
    fail_after: int = 0
    calls: int = 0
    served: int = 0
    on_page: Callable[[int], None] | None = None

    def pages(self, since: Any, key: str = "occurred_at") -> Iterator[list[dict[str, Any]]]:
        self.calls += 1
        rows = [dict(r) for r in self.rows if since is None or r[key] >= since]
        for number, start in enumerate(range(0, len(rows), self.page_size), start=1):
            if self.fail_after and number > self.fail_after:
                raise RuntimeError(f"injected API failure after page {self.fail_after}")
            self.served += 1
            if self.on_page is not None:
                self.on_page(number)
            yield rows[start : start + self.page_size]


@dataclass
class Target:
    """Where a test pipeline loads: a dlt destination plus a way to query it."""

    engine: str
    destination: Any
    query: Callable[[str], list[tuple[Any, ...]]]
    execute: Callable[[str], None]


def _duckdb_target(path: Path) -> Target:
    import dlt
    import duckdb

    def query(sql: str) -> list[tuple[Any, ...]]:
        with duckdb.connect(str(path)) as conn:
            return conn.execute(sql).fetchall()

    def execute(sql: str) -> None:
        with duckdb.connect(str(path)) as conn:
            conn.execute(sql)

    return Target("duckdb", dlt.destinations.duckdb(credentials=str(path)), query, execute)


def _postgres_target(db: Any) -> Target:
    import dlt
    import psycopg

    def query(sql: str) -> list[tuple[Any, ...]]:
        with psycopg.connect(db.url, autocommit=True) as conn:
            return conn.execute(sql).fetchall()

    def execute(sql: str) -> None:
        with psycopg.connect(db.url, autocommit=True) as conn:
            conn.execute(sql)

    return Target("postgres", dlt.destinations.postgres(credentials=db.dlt_url), query, execute)


@pytest.fixture(params=["duckdb", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> Target:
    """Each test runs against a real DuckDB file and a real PostgreSQL database."""
    if request.param == "duckdb":
        return _duckdb_target(tmp_path / "ck.duckdb")
    return _postgres_target(request.getfixturevalue("postgres_database"))


@pytest.fixture
def duck(tmp_path: Path) -> Target:
    """DuckDB only (for tests about the decorator rather than the engine)."""
    return _duckdb_target(tmp_path / "ck.duckdb")


@pytest.fixture
def make_pipeline(tmp_path: Path) -> Callable[..., Any]:
    """``make_pipeline(target)`` → a plain dlt pipeline in a throwaway working dir."""
    import dlt

    def build(target: Target, name: str = "ck_pipeline", dataset: str = "ds") -> Any:
        return dlt.pipeline(
            pipeline_name=name,
            destination=target.destination,
            dataset_name=dataset,
            pipelines_dir=str(tmp_path / "pipelines"),
        )

    return build


def checkpoint_rows(target: Target, table: str = "_dlt_custom_checkpoints") -> list[tuple]:
    """``(resource_name, run_id, checkpoint_value, page_number, status)`` oldest first."""
    return target.query(
        "SELECT resource_name, run_id, checkpoint_value, page_number, status "
        f"FROM ds.{table} ORDER BY created_at, page_number"
    )


@pytest.fixture
def logs(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """Captured structlog events of the checkpoint modules.

    Fresh logger proxies per test: an earlier in-process CLI test may have configured structlog
    with ``cache_logger_on_first_use``, which would pin the module loggers to that config.
    """
    import structlog
    from structlog.testing import capture_logs

    from dlt_ops.checkpoints import decorator, manager, service

    for module in (decorator, manager, service):
        monkeypatch.setattr(module, "log", structlog.get_logger(module.__name__))
    with capture_logs() as captured:
        yield captured


def events_of(captured: list[dict[str, Any]], level: str | None = None) -> list[str]:
    """The event texts (optionally of one level)."""
    return [e["event"] for e in captured if level is None or e["log_level"] == level]


def events_resource(api: FakeApi, *, frequency: int = 2, name: str = "events", **opts: Any) -> Any:
    """A checkpointed incremental resource over ``api``, named ``name`` (function: fetch)."""
    import dlt

    from dlt_ops import with_checkpoints

    @dlt.resource(name=name, primary_key="id", write_disposition="append")
    @with_checkpoints(cursor_field="occurred_at", frequency=frequency, **opts)
    def fetch(occurred_at: Any = dlt.sources.incremental("occurred_at", initial_value=T0)) -> Any:  # noqa: B008, E501
        yield from api.pages(occurred_at.start_value)

    return fetch


@pytest.fixture
def installed_adapter(monkeypatch: pytest.MonkeyPatch) -> Callable[[type], None]:
    """``installed_adapter(cls)``: ``cls`` is the installed DuckDB adapter for the sessions the
    checkpoint manager opens itself (what a plugin registering it would make it), for this test."""
    from types import ModuleType

    from dlt_ops import hookimpl
    from dlt_ops.checkpoints import manager
    from dlt_ops.plugins import PluginRegistry

    def install(adapter: type) -> None:
        @hookimpl
        def dlt_ops_register_destinations(register: Any) -> None:
            register(adapter, name="duckdb")

        plugin = ModuleType(f"tests_{adapter.__name__.lower()}")
        plugin.dlt_ops_register_destinations = dlt_ops_register_destinations  # type: ignore[attr-defined]
        registry = PluginRegistry(entry_points=[])
        registry.add_plugin(plugin, name="duckdb", kind="destination")
        monkeypatch.setattr(manager, "_registry", lambda: registry)

    return install


@pytest.fixture
def ck() -> Any:
    """The helpers above, for test modules (importlib mode cannot import conftest)."""
    from types import SimpleNamespace

    return SimpleNamespace(
        T0=T0,
        hourly_rows=hourly_rows,
        FakeApi=FakeApi,
        resource=events_resource,
        rows=checkpoint_rows,
        events=events_of,
    )
