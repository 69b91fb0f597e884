"""A local BigQuery for tests: the ``bqemulator`` 1.4.0 server, started in its own virtualenv.

The emulator pins an older duckdb than ours and registers a pytest plugin that must not load in
the project's environment, so it lives in a separate virtualenv under a cache directory
(``$DLTOPS_CACHE_DIR/bqemulator-1.4.0``, else ``$XDG_CACHE_HOME/dltops/...``, else
``~/.cache/dltops/...``), created with ``uv`` on first use and reused afterwards. Creation
holds an exclusive lock, and a venv counts as ready only once its marker file is written, so
two test processes starting at once build it once and never see half of it.

Use :func:`run_bigquery_emulator` as a context manager, or the session-scoped
``bigquery_emulator`` fixture from ``dlt_ops.testing.fixtures``. Nothing here imports the
BigQuery SDK until :meth:`BigQueryEmulator.client` is called.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dlt_ops.testing._tool_venv import cache_root, run_step, uv

EMULATOR_VERSION = "1.4.0"
DUCKDB_VERSION = "1.5.5"
REQUIREMENTS = (
    f"bqemulator[all]=={EMULATOR_VERSION}",
    f"duckdb=={DUCKDB_VERSION}",
    f"duckdb-extension-spatial=={DUCKDB_VERSION}",
)
DEFAULT_PROJECT = "test-project"
_READY_MARKER = ".dltops-ready"
#: Written into the marker; a venv built by an older recipe is rebuilt.
_RECIPE = " ".join((*REQUIREMENTS, "spatial-from-wheel", "compiled")) + "\n"


class EmulatorUnavailableError(RuntimeError):
    """The emulator could not be installed or started (the message says which step failed)."""


def cache_dir() -> Path:
    """Where the emulator's virtualenv and its DuckDB home live."""
    return cache_root() / f"bqemulator-{EMULATOR_VERSION}"


def _run(cmd: list[str], *, env: dict[str, str] | None = None, timeout: float = 600) -> str:
    return run_step(cmd, EmulatorUnavailableError, env=env, timeout=timeout)


def _home(root: Path) -> Path:
    """The ``HOME`` the emulator runs with (DuckDB keeps extensions in ``$HOME/.duckdb``)."""
    return root / "home"


def _build(venv: Path, home: Path) -> None:
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    env.pop("VIRTUAL_ENV", None)
    _run([*uv(), "venv", "-q", "-p", "3.11", str(venv)], env=env)
    python = venv / "bin" / "python"
    # Compiled bytecode: this machine sets PYTHONDONTWRITEBYTECODE, so without it every start
    # re-compiles the emulator (and its SQL translator) from source.
    _run(
        [*uv(), "pip", "install", "-q", "--compile-bytecode", "-p", str(python), *REQUIREMENTS],
        env=env,
    )
    # Out of the box the emulator downloads DuckDB's spatial extension at start (no internet
    # here); install it from the wheel into the emulator's private HOME instead.
    install = (
        "import duckdb, pathlib, duckdb_extension_spatial as m; "
        "p = next(pathlib.Path(m.__file__).parent.glob('extensions/*/spatial.duckdb_extension')); "
        "duckdb.execute(f\"INSTALL '{p}'\")"
    )
    home.mkdir(parents=True, exist_ok=True)
    _run([str(python), "-c", install], env={**env, "HOME": str(home)})


def _ready(venv: Path) -> bool:
    marker = venv / _READY_MARKER
    return marker.exists() and marker.read_text() == _RECIPE


def ensure_emulator_venv(root: Path | None = None) -> Path:
    """The emulator's virtualenv, created on first use; safe when processes race."""
    root = root or cache_dir()
    venv = root / "venv"
    if _ready(venv):
        return venv
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second process waits here, then finds the marker
        try:
            if _ready(venv):
                return venv
            if venv.exists():  # left half-built by a killed process
                shutil.rmtree(venv)
            _build(venv, _home(root))
            (venv / _READY_MARKER).write_text(_RECIPE)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return venv


@dataclass
class BigQueryEmulator:
    """A running emulator: where it listens and how to reach it."""

    host: str
    port: int
    project: str
    process: subprocess.Popen[bytes]
    log_path: Path

    @property
    def endpoint(self) -> str:
        """``http://127.0.0.1:PORT``: the REST endpoint for ``ClientOptions(api_endpoint=...)``."""
        return f"http://{self.host}:{self.port}"

    @property
    def emulator_host(self) -> str:
        """The value for ``BIGQUERY_EMULATOR_HOST`` (how dlt's loader finds the emulator).

        google-cloud-bigquery uses the variable verbatim as the API base URL, so it needs the
        scheme: a bare ``127.0.0.1:PORT`` fails with ``requests.InvalidSchema``.
        """
        return self.endpoint

    def connection_options(self) -> dict[str, object]:
        """``ConnectionTarget.options`` that point the BigQuery adapter here."""
        return {"api_endpoint": self.endpoint, "anonymous": True, "project": self.project}

    def alive(self) -> bool:
        """Whether the server process is still running."""
        return self.process.poll() is None

    def log_text(self) -> str:
        """Everything the server logged so far (for failure messages)."""
        return self.log_path.read_text(errors="replace")

    def client(self, timeout: float = 10.0) -> Any:
        """A ``google.cloud.bigquery.Client`` on the emulator, anonymous, short timeouts."""
        from google.api_core.client_options import ClientOptions
        from google.auth.credentials import AnonymousCredentials
        from google.cloud import bigquery

        if not self.alive():
            raise EmulatorUnavailableError("the BigQuery emulator is not running")
        return bigquery.Client(
            project=self.project,
            credentials=AnonymousCredentials(),
            client_options=ClientOptions(api_endpoint=self.endpoint),
            default_query_job_config=bigquery.QueryJobConfig(job_timeout_ms=int(timeout * 1000)),
        )


def _listen_port(line: str) -> int | None:
    try:
        record = json.loads(line)
    except ValueError:
        return None
    if not isinstance(record, dict) or record.get("event") != "rest.listen":
        return None
    for key in ("port", "rest_port"):
        if isinstance(record.get(key), int):
            return int(record[key])
    address = str(record.get("address") or record.get("addr") or record.get("url") or "")
    tail = address.rsplit(":", 1)[-1].strip("/")
    return int(tail) if tail.isdigit() else None


def _wait_for_port(proc: subprocess.Popen[bytes], log_path: Path, deadline: float) -> int:
    while time.monotonic() < deadline:
        for line in log_path.read_text(errors="replace").splitlines():
            port = _listen_port(line)
            if port:
                return port
        if proc.poll() is not None:
            raise EmulatorUnavailableError(
                f"bqemulator exited with {proc.returncode} during start-up:\n"
                f"{log_path.read_text(errors='replace')[-3000:]}"
            )
        time.sleep(0.05)  # polling the log for readiness, bounded by the deadline
    raise EmulatorUnavailableError(
        f"bqemulator logged no rest.listen line in time:\n"
        f"{log_path.read_text(errors='replace')[-3000:]}"
    )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


@contextlib.contextmanager
def run_bigquery_emulator(
    project: str = DEFAULT_PROJECT, *, startup_timeout: float = 90.0, root: Path | None = None
) -> Iterator[BigQueryEmulator]:
    """Start the emulator on a free port, yield it, SIGTERM it afterwards."""
    root = root or cache_dir()
    venv = ensure_emulator_venv(root)
    workdir = Path(tempfile.mkdtemp(prefix="dltops-bqemulator-"))
    log_path = workdir / "emulator.log"
    env = {**os.environ, "HOME": str(_home(root))}
    for var in ("VIRTUAL_ENV", "PYTHONPATH", "BIGQUERY_EMULATOR_HOST"):
        env.pop(var, None)
    cmd = [
        str(venv / "bin" / "bqemulator"),
        "start",
        "--rest-port",
        "0",
        "--grpc-port",
        "0",
        "--project",
        project,
        "--log-format",
        "json",
    ]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            cmd, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        port = _wait_for_port(proc, log_path, time.monotonic() + startup_timeout)
        emulator = BigQueryEmulator("127.0.0.1", port, project, proc, log_path)
        if not emulator.alive():
            raise EmulatorUnavailableError(f"bqemulator died after start:\n{emulator.log_text()}")
        yield emulator
    finally:
        _stop(proc)
        shutil.rmtree(workdir, ignore_errors=True)


def emulator_fixture() -> Iterator[BigQueryEmulator]:
    """Body of the ``bigquery_emulator`` fixture: skip when unavailable, fail under ``CI=true``."""
    import pytest

    stack = contextlib.ExitStack()
    try:
        emulator = stack.enter_context(run_bigquery_emulator())
    except EmulatorUnavailableError as exc:
        stack.close()
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"BigQuery emulator unavailable under CI=true: {exc}", pytrace=False)
        pytest.skip(f"BigQuery emulator unavailable: {exc}")
    with stack:
        yield emulator
