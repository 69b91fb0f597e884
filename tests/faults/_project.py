"""A throwaway dlt-ops project for fault trials: a paged source, the real CLI, direct SQL."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DLT_OPS = str(Path(sys.executable).parent / "dlt-ops")

#: ``FT_ROWS`` rows in ``FT_PAGES`` pages of an incremental, append-only resource. Each page
#: appends a line to ``FT_PROGRESS`` after it was yielded; ``extracted`` marks the end.
#: ``FT_AFTER_COMMIT`` acts the first time dlt records a package as loaded — after its load
#: committed (``_dlt_loads`` written), before the marker file and the move to ``load/loaded``:
#: ``kill`` SIGKILLs the run there; ``fill:<dir>`` fills the file system of ``<dir>``, so dlt's
#: own write fails with ENOSPC; ``run:<command>`` runs a shell command (e.g. stops the database)
#: and fails that write as ENOSPC would. ``FT_AFTER_FINISH=kill`` SIGKILLs the run right after
#: its ledger row's ``completed`` finish, before its receipt.
SOURCE = """
import os
import time
from datetime import datetime, timedelta, timezone

import dlt

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
CHECKPOINTED = {checkpointed}


def _fill(folder):
    fd = os.open(os.path.join(folder, "filler"), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    size = 1 << 20
    while size:
        try:
            os.write(fd, b"\\0" * size)
        except OSError:
            size //= 2
    os.close(fd)


_AFTER_COMMIT = os.environ.get("FT_AFTER_COMMIT", "")
if _AFTER_COMMIT:
    import signal

    from dlt.common.storages.load_package import PackageStorage

    _complete = PackageStorage.complete_loading_package

    def _after_commit(self, load_id, load_state):
        PackageStorage.complete_loading_package = _complete  # once per process
        if _AFTER_COMMIT == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if _AFTER_COMMIT.startswith("run:"):
            import subprocess

            subprocess.run(_AFTER_COMMIT[4:], shell=True, check=False)
            raise OSError(28, "No space left on device (injected after the commit)")
        _fill(_AFTER_COMMIT.partition(":")[2])
        return _complete(self, load_id, load_state)

    PackageStorage.complete_loading_package = _after_commit

if os.environ.get("FT_AFTER_FINISH") == "kill":  # SIGKILL once the ledger row says completed
    import signal

    from dlt_ops.ledger.writer import LedgerWriter

    _finish = LedgerWriter.finish

    def _finish_then_die(self, status, **fields):
        record = _finish(self, status, **fields)
        if str(status) == "completed":
            os.kill(os.getpid(), signal.SIGKILL)
        return record

    LedgerWriter.finish = _finish_then_die


def _mark(text):
    path = os.environ.get("FT_PROGRESS")
    if path:
        with open(path, "a") as out:
            out.write(text + "\\n")


def _pages(since):
    rows, pages = int(os.environ.get("FT_ROWS", "4000")), int(os.environ.get("FT_PAGES", "8"))
    per = rows // pages
    for p in range(pages):
        page = [
            {{"id": n, "at": START + timedelta(seconds=n), "payload": "p%05d" % p}}
            for n in range(p * per, (p + 1) * per)
            if START + timedelta(seconds=n) >= since
        ]
        if page:
            yield page
            _mark("page %d" % p)
            time.sleep(float(os.environ.get("FT_PAGE_SLEEP", "0.02")))
    _mark("extracted")


def _items(at=dlt.sources.incremental("at", initial_value=START)):
    yield from _pages(at.start_value)


if CHECKPOINTED:
    from dlt_ops import with_checkpoints

    _items = with_checkpoints(cursor_field="at", frequency=1)(_items)

items = dlt.resource(_items, name="items", primary_key="id", write_disposition="append")


@dlt.source(name="{name}")
def {name}_source():
    return items
"""

CONFIG = """
[dlt_ops]
default_destination = "{engine}"
default_dataset = "ds"
heartbeat_seconds = 0.5
connect_timeout = 3

[sources.{name}.dlt_ops]
schedule = "@daily"
"""


@dataclass
class FaultProject:
    """One project on one engine; ``query`` runs SQL against its destination."""

    root: Path
    engine: str
    name: str = "paged"
    env: dict[str, str] = field(default_factory=dict)
    db_url: str | None = None

    @property
    def duckdb_path(self) -> Path:
        return self.root / f"{self.name}_pipeline.duckdb"

    def cli(self, *args: str, env: dict[str, str] | None = None, timeout: float = 240):
        return subprocess.run(
            [DLT_OPS, "--root", str(self.root), *args],
            capture_output=True,
            text=True,
            env=self._env(env),
            timeout=timeout,
            check=False,
        )

    def popen(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [DLT_OPS, "--root", str(self.root), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=self._env(env),
        )

    def _env(self, extra: dict[str, str] | None) -> dict[str, str]:
        return {**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false", **self.env, **(extra or {})}

    def query(self, sql: str, *, dataset: str = "ds") -> list[tuple[Any, ...]]:
        sql = sql.replace("{ds}", dataset)
        if self.engine == "duckdb":
            import duckdb

            with duckdb.connect(str(self.duckdb_path), read_only=True) as con:
                return con.execute(sql).fetchall()
        import psycopg

        with psycopg.connect(self.db_url, autocommit=True) as conn:
            return conn.execute(sql).fetchall()

    def table_exists(self, table: str, *, dataset: str = "ds") -> bool:
        if self.engine == "duckdb" and not self.duckdb_path.exists():
            return False
        rows = self.query(
            "SELECT count(*) FROM information_schema.tables "
            f"WHERE table_schema = '{dataset}' AND table_name = '{table}'"
        )
        return rows[0][0] > 0

    def ledger(self) -> list[tuple[str, str, int | None]]:
        """``(run_id, status, records_loaded)`` of every ledger row of this source."""
        if not self.table_exists("_dlt_ops_runs"):
            return []
        return self.query(
            "SELECT run_id, status, records_loaded FROM {ds}._dlt_ops_runs "
            f"WHERE source_section = '{self.name}' ORDER BY started_at"
        )

    def receipts_loaded(self) -> int:
        """Rows every receipt of this source says it loaded (root and child tables)."""
        if not self.table_exists("_dlt_ops_receipts"):
            return 0
        return int(self.query(
            "SELECT coalesce(sum(rows_loaded + child_rows_loaded), 0) FROM {ds}._dlt_ops_receipts "
            f"WHERE source_section = '{self.name}'"
        )[0][0])  # fmt: skip


def make_project(
    root: Path, engine: str, *, checkpointed: bool = False, db: Any = None, name: str = "paged"
) -> FaultProject:
    """A project with one ``paged`` source on ``engine`` (``db``: a PostgreSQL database)."""
    (root / ".dlt").mkdir(parents=True)
    (root / ".dlt" / "config.toml").write_text(
        textwrap.dedent(CONFIG.format(engine=engine, name=name))
    )
    module = root / "pl" / "source" / f"{name}.py"
    module.parent.mkdir(parents=True)
    module.write_text(SOURCE.format(name=name, checkpointed=checkpointed))
    env: dict[str, str] = {}
    if db is not None:
        env["DESTINATION__POSTGRES__CREDENTIALS"] = db.dlt_url
    return FaultProject(root, engine, name, env, db.url if db is not None else None)


def wait_for_line(
    path: Path, wanted: str, proc: subprocess.Popen[str], timeout: float = 120
) -> bool:
    """Poll ``path`` until a line equals ``wanted``; ``False`` if the process ended first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and wanted in path.read_text().splitlines():
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.01)
    raise AssertionError(f"{wanted!r} never appeared in {path} within {timeout} s")


def wait_for(
    condition: Callable[[], bool], proc: subprocess.Popen[str], timeout: float = 120
) -> bool:
    """Poll ``condition`` until it holds; ``False`` if the process ended first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        if proc.poll() is not None:
            return condition()
        time.sleep(0.005)
    raise AssertionError(f"condition never held within {timeout} s")


def _has_package(project: FaultProject, stage: str) -> bool:
    """A package sits in ``load/<stage>`` of the source's working dir (any layout).

    dlt moves folders while we look, so a vanished folder just means "not yet".
    """
    pipelines = project.root / ".dlt-ops" / "pipelines"
    patterns = (f"*/*/*/load/{stage}/*", f"*/load/{stage}/*")
    try:
        return any(next(pipelines.glob(p), None) is not None for p in patterns)
    except OSError:
        return False


def has_normalized_package(project: FaultProject) -> bool:
    """dlt moved a package to ``load/normalized``: the load step is next (or running)."""
    return _has_package(project, "normalized")


def has_committed_job(project: FaultProject, table: str = "items") -> bool:
    """A job of ``table`` is committed in the destination and moved to ``completed_jobs``, while
    its package is still in ``load/normalized``: right after the load committed, before dlt
    records the package as loaded and before the ledger's finish."""
    pipelines = project.root / ".dlt-ops" / "pipelines"
    patterns = (f"*/*/*/load/normalized/*/completed_jobs/{table}.*",
                f"*/load/normalized/*/completed_jobs/{table}.*")  # fmt: skip
    try:
        return any(next(pipelines.glob(p), None) is not None for p in patterns)
    except OSError:
        return False


def has_loaded_package(project: FaultProject) -> bool:
    """dlt finished loading a package (``load/loaded``): the run's ledger finish is next."""
    return _has_package(project, "loaded")
