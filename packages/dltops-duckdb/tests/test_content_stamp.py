"""The DuckDB content stamp: absent while a write could still hide, changed by every write."""

from __future__ import annotations

import os
import time
from pathlib import Path

import duckdb

from dlt_ops.adapters import ConnectionTarget
from dltops_duckdb.adapter import MEMORY, DuckDBAdapter


def _target(root: Path, name: str = "db.duckdb") -> ConnectionTarget:
    return ConnectionTarget("duckdb", "ds", root, credentials=name, read_only=True)


def _age(path: Path, seconds: float = 60.0) -> None:
    """Move the file's and its WAL's mtime back (a write long ago)."""
    past = time.time() - seconds
    for name in (path, Path(f"{path}.wal")):
        if name.exists():
            os.utime(name, (past, past))


def _write(path: Path, sql: str) -> None:
    with duckdb.connect(str(path)) as con:
        con.execute(sql)


def test_no_stamp_for_memory_an_absent_file_or_a_fresh_write(tmp_path: Path) -> None:
    adapter = DuckDBAdapter()
    assert adapter.content_stamp(_target(tmp_path, MEMORY)) is None
    assert adapter.content_stamp(_target(tmp_path)) is None
    _write(tmp_path / "db.duckdb", "CREATE SCHEMA ds; CREATE TABLE ds.t (a INT)")
    assert adapter.content_stamp(_target(tmp_path)) is None  # just written: not yet quiet
    _age(tmp_path / "db.duckdb")
    assert isinstance(adapter.content_stamp(_target(tmp_path)), str)


def test_every_write_changes_the_stamp_even_at_the_same_size(tmp_path: Path) -> None:
    adapter, path = DuckDBAdapter(), tmp_path / "db.duckdb"
    _write(path, "CREATE SCHEMA ds; CREATE TABLE ds.t (a INT); INSERT INTO ds.t VALUES (1)")
    _age(path)
    stamps = [adapter.content_stamp(_target(tmp_path))]
    for sql in ("UPDATE ds.t SET a = 2", "INSERT INTO ds.t VALUES (3)", "DELETE FROM ds.t"):
        size = path.stat().st_size
        _write(path, sql)
        assert adapter.content_stamp(_target(tmp_path)) is None  # modified just now
        _age(path)
        stamps.append(adapter.content_stamp(_target(tmp_path)))
        if sql.startswith("UPDATE"):
            assert path.stat().st_size == size  # the case size alone would miss
    assert None not in stamps and len(set(stamps)) == len(stamps)


def test_restoring_an_old_mtime_still_changes_the_stamp(tmp_path: Path) -> None:
    adapter, path = DuckDBAdapter(), tmp_path / "db.duckdb"
    _write(path, "CREATE SCHEMA ds; CREATE TABLE ds.t (a INT)")
    _age(path)
    before = adapter.content_stamp(_target(tmp_path))
    mtime = path.stat().st_mtime
    _write(path, "INSERT INTO ds.t VALUES (1)")
    for name in (path, Path(f"{path}.wal")):
        if name.exists():
            os.utime(name, (mtime, mtime))  # as a copy tool that keeps times would
    assert adapter.content_stamp(_target(tmp_path)) not in (before, None)
