"""Shared fixtures for the Postgres adapter tests: a password-protected role and its database."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest

from dlt_ops.testing.postgres import PostgresServer

#: Planted in credentials; it must never show up in errors, CLI output or logs.
SECRET = "Pl4nted-S3cret/pw@#x"


@dataclass(frozen=True)
class Role:
    """A login role with a password and a database it owns."""

    server: PostgresServer
    user: str
    password: str
    dbname: str

    def url(self, password: str | None = None, *, scheme: str = "postgresql", port: int = 0) -> str:
        pw = quote(self.password if password is None else password, safe="")
        return (
            f"{scheme}://{self.user}:{pw}@{self.server.host}:{port or self.server.port}/"
            f"{self.dbname}"
        )

    def fields(self, **overrides: object) -> dict[str, object]:
        fields: dict[str, object] = {
            "database": self.dbname,
            "username": self.user,
            "password": self.password,
            "host": self.server.host,
            "port": self.server.port,
        }
        return {**fields, **overrides}


def _admin(server: PostgresServer, *statements: str) -> None:
    import psycopg

    with psycopg.connect(server.url, autocommit=True) as conn:
        for statement in statements:
            conn.execute(statement)


@pytest.fixture(scope="session")
def role(postgres_server: PostgresServer) -> Iterator[Role]:
    """``alice_<hex>`` with password :data:`SECRET`, owning a fresh database."""
    name = f"alice_{uuid.uuid4().hex[:8]}"
    escaped = SECRET.replace("'", "''")
    _admin(
        postgres_server,
        f"CREATE ROLE {name} LOGIN PASSWORD '{escaped}'",
        f"CREATE DATABASE {name}_db OWNER {name}",
    )
    yield Role(postgres_server, name, SECRET, f"{name}_db")
    _admin(postgres_server, f"DROP DATABASE {name}_db WITH (FORCE)", f"DROP ROLE {name}")


@pytest.fixture(autouse=True)
def _no_ambient_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials from the developer's shell must not leak into the tests."""
    for key in list(os.environ):
        if "DESTINATION__" in key:
            monkeypatch.delenv(key)


@pytest.fixture
def project(tmp_path: Path) -> Callable[..., Path]:
    """Write a minimal dlt-ops project (``[dlt_ops]`` config plus secrets) and return its root."""

    def write(*, config: str = "", secrets: str = "") -> Path:
        (tmp_path / ".dlt").mkdir(parents=True, exist_ok=True)
        (tmp_path / ".dlt" / "config.toml").write_text("[dlt_ops]\n" + config)
        (tmp_path / ".dlt" / "secrets.toml").write_text(secrets)
        return tmp_path

    return write
