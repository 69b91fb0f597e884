"""Fixtures for end-to-end tests: throwaway projects and the real `dlt-ops` CLI in a subprocess."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

CLI = "import sys; sys.argv = ['dlt-ops', *sys.argv[1:]]; from dlt_ops.cli import main; main()"

#: One ``events_src`` source on DuckDB, dataset ``ds`` (the events template as its module).
EVENTS_ON_DUCKDB = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"

[sources.events_src.dlt_ops]
schedule = "@daily"
"""

EVENTS_SOURCE = """
from datetime import datetime, timezone

import dlt

ROWS = [
    {"id": i, "kind": "k%d" % (i % 3), "occurred_at": datetime(2026, 1, i, 12, tzinfo=timezone.utc)}
    for i in range(1, 7)
]


START = datetime(2020, 1, 1, tzinfo=timezone.utc)


@dlt.resource(name="events", primary_key="id", write_disposition="merge")
def events(occurred_at=dlt.sources.incremental("occurred_at", initial_value=START)):
    yield [r for r in ROWS]


@dlt.source(name="{name}")
def {name}_source():
    return events
"""

RAISING_SOURCE = """
import dlt


@dlt.resource(name="rows")
def rows():
    yield [{"a": 1}]


@dlt.source(name="{name}")
def {name}_source():
    raise ValueError("cannot resolve secret sources.{name}.api_key: set it in .dlt/secrets.toml")
"""

BLOCKING_SOURCE = """
import os
import time
from pathlib import Path

import dlt


@dlt.resource(name="rows")
def rows():
    Path(os.environ["DLTOPS_TEST_STARTED"]).write_text("started")
    while not Path(os.environ["DLTOPS_TEST_RELEASE"]).exists():
        time.sleep(0.05)
    yield [{"a": 1}]


@dlt.source(name="{name}")
def {name}_source():
    return rows
"""


def write_project(
    root: Path, config: str, sources: dict[str, str], pipeline: str = "my_pipeline"
) -> Path:
    """A project at ``root``: ``.dlt/config.toml`` and one module per source."""
    (root / ".dlt").mkdir(parents=True, exist_ok=True)
    (root / ".dlt" / "config.toml").write_text(textwrap.dedent(config))
    source_dir = root / pipeline / "source"
    source_dir.mkdir(parents=True, exist_ok=True)
    for name, template in sources.items():
        (source_dir / f"{name}.py").write_text(template.replace("{name}", name))
    return root


def age_databases(root: Path) -> None:
    """Move every DuckDB file's mtime a minute back, as if the last write was long ago (the
    read cache stamps only a file quiet for two seconds)."""
    past = time.time() - 60
    for path in [*root.glob("*.duckdb"), *root.glob("*.duckdb.wal")]:
        os.utime(path, (past, past))


def imported_modules(stderr: str) -> set[str]:
    """The modules a process imported, from its ``PYTHONPROFILEIMPORTTIME=1`` report."""
    return {
        ln.rsplit("|", 1)[1].strip() for ln in stderr.splitlines() if ln.startswith("import time:")
    }


@pytest.fixture
def project(tmp_path: Path) -> Callable[..., Path]:
    """``project(config, {source: template})`` → a fresh project root."""

    def make(config: str, sources: dict[str, str], name: str = "proj") -> Path:
        return write_project(tmp_path / name, config, sources)

    return make


def run_cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a fresh interpreter."""
    full_env = {**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false", **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", CLI, *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """The ``run_cli`` helper as a fixture."""
    return run_cli


@pytest.fixture
def templates() -> dict[str, str]:
    """Source module templates (``{name}`` is replaced by the source name)."""
    return {"events": EVENTS_SOURCE, "raising": RAISING_SOURCE, "blocking": BLOCKING_SOURCE}


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def blocking_run(tmp_path: Path) -> Callable[..., subprocess.Popen[str]]:
    """Start ``pipeline run -s <source>`` of a ``blocking`` source; return once it is extracting."""

    def start(root: Path, source: str) -> subprocess.Popen[str]:
        started = tmp_path / f"{source}.started"
        env = {
            **os.environ,
            "RUNTIME__DLTHUB_TELEMETRY": "false",
            "DLTOPS_TEST_STARTED": str(started),
            "DLTOPS_TEST_RELEASE": str(tmp_path / f"{source}.release"),
        }
        proc = subprocess.Popen(
            [sys.executable, "-c", CLI, "pipeline", "run", "-s", source, "-y"],
            cwd=root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            # a suite started in the background of a non-interactive shell ignores SIGINT, and
            # children inherit that: the interrupt tests need Python's own Ctrl-C handling
            preexec_fn=_default_sigint,
        )
        deadline = time.monotonic() + 60
        while not started.exists():  # polls a file the source writes, with a deadline
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                out, err = proc.communicate()
                raise AssertionError(f"run never started: {err[-2000:]}")
            time.sleep(0.05)
        return proc

    return start


#: google.auth.default() answers anonymously in the CLI's process (the emulator needs no key)
_ANONYMOUS_GOOGLE = """
import google.auth
from google.auth.credentials import AnonymousCredentials

google.auth.default = lambda *a, **k: (AnonymousCredentials(), "not-the-emulators-project")
"""


@pytest.fixture
def bigquery_cli_env(tmp_path: Path) -> Callable[[Any, Path], dict[str, str]]:
    """``env(emulator, root)``: the project's secrets name the emulator's project, and the
    returned environment points a CLI subprocess at the emulator, anonymously."""

    def make(emulator: Any, root: Path) -> dict[str, str]:
        (root / ".dlt" / "secrets.toml").write_text(
            f'[destination.bigquery.credentials]\nproject_id = "{emulator.project}"\n'
        )
        shim = tmp_path / "bigquery-shim"
        shim.mkdir(exist_ok=True)
        (shim / "sitecustomize.py").write_text(_ANONYMOUS_GOOGLE)
        return {
            "BIGQUERY_EMULATOR_HOST": emulator.emulator_host,
            "NORMALIZE__DATA_WRITER__DISABLE_COMPRESSION": "true",  # the emulator does not gunzip
            "PYTHONPATH": os.pathsep.join([str(shim), os.environ.get("PYTHONPATH", "")]),
        }

    return make


@pytest.fixture
def postgres_statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement the PostgreSQL adapter sends in this test (counted at
    ``PostgresAdapter._run``, its one way to the server), in order."""
    from dltops_postgres.adapter import PostgresAdapter

    statements: list[str] = []
    run = PostgresAdapter._run

    def counted(self: PostgresAdapter, client: Any, sql: str, params: Any, *, fetch: bool) -> Any:
        statements.append(sql)
        return run(self, client, sql, params, fetch=fetch)

    monkeypatch.setattr(PostgresAdapter, "_run", counted)
    return statements
