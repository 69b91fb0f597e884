"""``dlt_ops.testing.postgres``: the throwaway server and its pytest fixture."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from dlt_ops.adapters import ConnectionTarget, DestinationSession, Statement
from dlt_ops.testing.postgres import (
    ENV_URL,
    PostgresServer,
    PostgresUnavailable,
    free_port,
    running_postgres,
)
from dltops_postgres.adapter import PostgresAdapter


def _accepts(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=2).close()
        return True
    except OSError:
        return False


def test_started_server_is_private_and_cleaned_up(monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg

    monkeypatch.delenv(ENV_URL, raising=False)
    with running_postgres() as server:
        assert server.host == "127.0.0.1" and server.data_dir is not None
        root = server.data_dir.parent
        assert str(root).startswith("/tmp/dltops-pg-")
        if os.geteuid() == 0:  # PostgreSQL refuses root: the cluster belongs to `postgres`
            assert server.data_dir.owner() == "postgres"
        with psycopg.connect(server.url) as conn:
            row = conn.execute("SELECT current_setting('fsync'), current_user").fetchone()
        assert row == ("off", "postgres")
        assert server.dlt_url == f"postgresql://postgres:unused@127.0.0.1:{server.port}/postgres"
        # dlt's field form, as the adapter receives it from .dlt/secrets.toml
        target = ConnectionTarget("postgres", "ds", Path("."), credentials=server.credentials)
        with DestinationSession.open(PostgresAdapter(), target) as session:
            assert session.query(Statement("SELECT current_user")) == [("postgres",)]
    assert not root.exists()
    assert not _accepts("127.0.0.1", server.port)


def test_env_url_is_used_instead_of_starting_a_server(
    postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_URL, postgres_server.dlt_url)
    with running_postgres() as server:
        assert (server.host, server.port, server.user, server.password) == (
            "127.0.0.1",
            postgres_server.port,
            "postgres",
            "unused",
        )
        assert server.data_dir is None and not server.password_auth
    assert _accepts(postgres_server.host, postgres_server.port)  # not ours: left running


def test_unreachable_env_url_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_URL, f"postgresql://u:p@127.0.0.1:{free_port()}/db")
    with pytest.raises(PostgresUnavailable, match="not reachable"), running_postgres():
        pass


def test_fresh_database_per_test(postgres_database: PostgresServer) -> None:
    import psycopg

    with psycopg.connect(postgres_database.url) as conn:
        (name,) = conn.execute("SELECT current_database()").fetchone() or ("",)
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()
    assert name == postgres_database.dbname != "postgres"
    assert tables == (0,)


@pytest.mark.parametrize(("ci", "outcome"), [("true", "errors"), ("", "skipped")])
def test_fixture_skips_locally_and_fails_in_ci(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ci: str, outcome: str
) -> None:
    monkeypatch.setenv(ENV_URL, f"postgresql://u:p@127.0.0.1:{free_port()}/db")
    monkeypatch.setenv("CI", ci)
    pytester.makepyfile("def test_needs_pg(postgres_server):\n    assert False\n")
    result = pytester.runpytest_inprocess(
        "-rs", "-p", "dlt_ops.testing.fixtures", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(**{outcome: 1})
    expected = "PostgreSQL is required in CI" if ci else "PostgreSQL unavailable"
    assert expected in result.stdout.str()


def test_find_bindir_prefers_the_highest_version() -> None:
    from dlt_ops.testing.postgres import find_bindir

    bindir = find_bindir()
    assert bindir is not None and (bindir / "pg_ctl").exists()
    installed = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3])
    )
    if installed:
        assert bindir == installed[-1].parent
