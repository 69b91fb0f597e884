"""pytest fixtures for dlt-ops and plugin test suites.

Opt in from a ``conftest.py``: ``pytest_plugins = ["dlt_ops.testing.fixtures"]``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest

from dlt_ops.plugins import PluginRegistry


@pytest.fixture
def plugin_registry() -> Callable[..., PluginRegistry]:
    """Build a fresh registry holding only inline plugins.

    Call it as ``plugin_registry(("destination", "x", module))``.

    Each item is ``(kind, name, module_or_object)``; no installed entry point is read, so a
    test sees exactly the plugins it names. Pass ``entry_points=[...]`` to add metadata-level
    entry points as well.
    """

    def build(
        *plugins: tuple[str, str, ModuleType | Any],
        entry_points: list[Any] | None = None,
        picks: dict[str, dict[str, str]] | None = None,
    ) -> PluginRegistry:
        registry = PluginRegistry(entry_points=entry_points or [], picks=picks)
        for kind, name, module in plugins:
            registry.add_plugin(module, name=name, kind=kind)
        return registry

    return build


# -- PostgreSQL (a real server, one per test session) -----------------------------------------


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Any]:
    """A running PostgreSQL server (``dlt_ops.testing.postgres.PostgresServer``) for the session.

    Started from the machine's binaries in a throwaway directory (see
    :func:`dlt_ops.testing.postgres.running_postgres`) or taken from
    ``DLTOPS_TEST_POSTGRES_URL``. Skipped when unavailable, except with ``CI=true``, where an
    unavailable server fails the tests that need it.
    """
    import os

    from dlt_ops.testing.postgres import PostgresUnavailable, running_postgres

    try:
        with running_postgres() as server:
            yield server
    except PostgresUnavailable as exc:
        if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
            pytest.fail(f"PostgreSQL is required in CI and unavailable: {exc}", pytrace=False)
        pytest.skip(f"PostgreSQL unavailable: {exc}")


@pytest.fixture
def postgres_database(postgres_server: Any) -> Iterator[Any]:
    """A fresh, empty database on the session's server (dropped afterwards); needs psycopg."""
    db = postgres_server.create_database()
    yield db
    postgres_server.drop_database(db.dbname)


@pytest.fixture(scope="session")
def bigquery_emulator() -> Iterator[Any]:
    """A running BigQuery emulator (``dlt_ops.testing.bigquery.BigQueryEmulator``).

    ``bqemulator`` in its own cached virtualenv, on a free port, stopped at session end (see
    :func:`dlt_ops.testing.bigquery.run_bigquery_emulator`). Skipped when it cannot be set up,
    except with ``CI=true``, where that fails the tests that need it.
    """
    from dlt_ops.testing.bigquery import emulator_fixture

    yield from emulator_fixture()
