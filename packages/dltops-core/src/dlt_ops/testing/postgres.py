"""A real, throwaway PostgreSQL server for test suites (ours and third parties').

:func:`running_postgres` starts one from the machine's server binaries
(``/usr/lib/postgresql/<highest version>/bin``, else ``initdb``/``pg_ctl`` on ``PATH``): a fresh
cluster under ``/tmp``, listening on 127.0.0.1 on a free port, durability switched off for
speed. The ``postgres`` superuser connects without a password (trust); every other role must
present its password (scram), so tests can tell which password a credential lookup chose.
PostgreSQL refuses to run as root, so when the process is root every server command runs as
the ``postgres`` user through ``runuser``. On exit the server is stopped (``pg_ctl -m fast``)
and the directory removed.

When ``DLTOPS_TEST_POSTGRES_URL`` is set, that server is used instead and nothing is started.

If no server can be had, :class:`PostgresUnavailable` is raised; the pytest fixture
``postgres_server`` (in :mod:`dlt_ops.testing.fixtures`) turns that into a skip, or into a
failure when ``CI=true``. Creating throwaway databases needs ``psycopg`` (v3), imported lazily.
"""

from __future__ import annotations

import dataclasses
import glob
import os
import re
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

ENV_URL = "DLTOPS_TEST_POSTGRES_URL"
_SERVER_OPTIONS = (
    "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
    "-c max_connections=200 -c shared_buffers=32MB"
)


# The superuser needs no password (so does dlt's "unused" one); every other role must present
# its real password, so tests can prove which password a credential lookup picked.
_HBA = """\
local all all                       trust
host  all postgres 127.0.0.1/32     trust
host  all postgres ::1/128          trust
host  all all      127.0.0.1/32     scram-sha-256
host  all all      ::1/128          scram-sha-256
"""


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server could be started or reached; the message says why and what to do."""


@dataclass(frozen=True)
class PostgresServer:
    """Where a running test server listens, and how to reach it."""

    host: str
    port: int
    user: str = "postgres"
    password: str = ""
    dbname: str = "postgres"
    data_dir: Path | None = None  # None when the server was not started by us

    @property
    def password_auth(self) -> bool:
        """Whether roles other than the superuser must present their password.

        True for servers started here; unknown (reported False) for ``DLTOPS_TEST_POSTGRES_URL``.
        """
        return self.data_dir is not None

    def _url(self, password: str) -> str:
        auth = quote(self.user, safe="")
        if password:
            auth += ":" + quote(password, safe="")
        return f"postgresql://{auth}@{self.host}:{self.port}/{quote(self.dbname, safe='')}"

    @property
    def url(self) -> str:
        """``postgresql://user[:password]@host:port/dbname`` (libpq and psycopg accept it)."""
        return self._url(self.password)

    @property
    def dlt_url(self) -> str:
        """The URL with a password even under trust auth: dlt refuses credentials without one."""
        return self._url(self.password or "unused")

    @property
    def credentials(self) -> dict[str, Any]:
        """dlt's field form (``[destination.postgres.credentials]``)."""
        return {
            "database": self.dbname,
            "username": self.user,
            "password": self.password or "unused",
            "host": self.host,
            "port": self.port,
        }

    def with_database(self, dbname: str) -> PostgresServer:
        """The same server, pointed at another database."""
        return dataclasses.replace(self, dbname=dbname)

    def _admin(self, sql: str) -> None:
        import psycopg  # lazily: dltops-core itself does not depend on a Postgres driver

        with psycopg.connect(self.url, autocommit=True, connect_timeout=10) as conn:
            conn.execute(sql)

    def create_database(self, name: str | None = None) -> PostgresServer:
        """Create a fresh database (a unique name by default) and return a handle on it."""
        name = name or f"t_{uuid.uuid4().hex[:16]}"
        if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", name):
            raise ValueError(f"database name {name!r} must be a lowercase SQL name")
        self._admin(f'CREATE DATABASE "{name}"')
        return self.with_database(name)

    def drop_database(self, name: str) -> None:
        """Drop ``name`` (closing its connections); absent databases are ignored."""
        if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", name):
            raise ValueError(f"database name {name!r} must be a lowercase SQL name")
        self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def find_bindir() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl`` of the highest installed version."""

    def version(path: str) -> tuple[int, ...]:
        digits = re.findall(r"\d+", Path(path).parent.parent.name)
        return tuple(int(d) for d in digits)

    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=version)
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    if on_path and shutil.which("pg_ctl", path=str(Path(on_path).parent)):
        return Path(on_path).parent
    return None


def free_port(host: str = "127.0.0.1") -> int:
    """A port the OS just handed out for ``host`` (bind to port 0, then release it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _server_from_url(url: str) -> PostgresServer:
    parts = urlsplit(url)
    if parts.scheme not in ("postgresql", "postgres") or not parts.hostname:
        raise PostgresUnavailable(
            f"{ENV_URL} must look like postgresql://user:password@host:port/dbname"
        )
    server = PostgresServer(
        host=parts.hostname,
        port=parts.port or 5432,
        user=unquote(parts.username or "postgres"),
        password=unquote(parts.password or ""),
        dbname=unquote(parts.path.lstrip("/")) or "postgres",
    )
    try:
        socket.create_connection((server.host, server.port), timeout=5).close()
    except OSError as exc:
        raise PostgresUnavailable(
            f"{ENV_URL} points at {server.host}:{server.port}, which is not reachable ({exc}). "
            f"Start that server or unset {ENV_URL} to let the suite start its own."
        ) from None
    return server


class _Cluster:
    """Runs the server commands, as the ``postgres`` user when we are root."""

    def __init__(self, bindir: Path, root: Path) -> None:
        self.bindir, self.root, self.data = bindir, root, root / "data"
        self.as_root = hasattr(os, "geteuid") and os.geteuid() == 0

    def run(self, tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = [str(self.bindir / tool), *args]
        if self.as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env.setdefault("LC_ALL", "C")
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
        if check and done.returncode != 0:
            raise PostgresUnavailable(f"{tool} failed ({done.returncode}): {self._why(done)}")
        return done

    def _why(self, done: subprocess.CompletedProcess[str]) -> str:
        log = self.root / "server.log"
        tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
        return " ".join((done.stderr.strip() + "\n" + tail).split())[-2000:]

    def init(self) -> None:
        if self.as_root:
            shutil.chown(self.root, user="postgres", group="postgres")
        self.run(
            "initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
            "--no-locale", "--no-sync",
        )  # fmt: skip
        # Rewrite in place (ownership stays with the server's user): first match wins.
        (self.data / "pg_hba.conf").write_text(_HBA)

    def start(self, port: int) -> subprocess.CompletedProcess[str]:
        opts = f"-h 127.0.0.1 -p {port} -k {self.root} {_SERVER_OPTIONS}"
        log = str(self.root / "server.log")
        args = ("-D", str(self.data), "-l", log, "-w", "-t", "60", "-o", opts, "start")
        return self.run("pg_ctl", *args, check=False)

    def stop(self) -> None:
        done = self.run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop", check=False)
        if done.returncode != 0 and (self.data / "postmaster.pid").exists():
            self.run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", check=False)


@contextmanager
def running_postgres() -> Iterator[PostgresServer]:
    """Yield a running PostgreSQL server; stop and delete it afterwards (if we started it)."""
    url = os.environ.get(ENV_URL)
    if url:
        yield _server_from_url(url)
        return
    if shutil.which("runuser") is None and hasattr(os, "geteuid") and os.geteuid() == 0:
        raise PostgresUnavailable("running as root needs `runuser` to start PostgreSQL")
    bindir = find_bindir()
    if bindir is None:
        raise PostgresUnavailable(
            "no PostgreSQL server binaries (initdb, pg_ctl) found under /usr/lib/postgresql/*/bin "
            "or on PATH. Install them (`apt-get install postgresql`) or set "
            f"{ENV_URL}=postgresql://user:password@host:port/dbname."
        )
    root = Path(tempfile.mkdtemp(prefix="dltops-pg-", dir="/tmp"))
    cluster = _Cluster(bindir, root)
    started = False
    try:
        cluster.init()
        for _attempt in range(3):  # another process may grab the free port before we bind it
            port = free_port()
            done = cluster.start(port)
            if done.returncode == 0:
                started = True
                break
            if "already in use" not in cluster._why(done):
                break
        if not started:
            raise PostgresUnavailable(f"PostgreSQL did not start: {cluster._why(done)}")
        yield PostgresServer(host="127.0.0.1", port=port, data_dir=cluster.data)
    finally:
        if started:
            cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
