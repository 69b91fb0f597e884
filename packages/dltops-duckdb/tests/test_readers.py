"""Read-only connections (what `status` uses): shared instance, per-file scoping, no writes."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from dlt_ops.adapters import ConnectionTarget, Statement
from dlt_ops.errors import DestinationError
from dltops_duckdb.adapter import DuckDBAdapter


def _file(path: Path, table: str) -> None:
    with duckdb.connect(str(path)) as con:
        con.execute(
            f"CREATE SCHEMA ds; CREATE TABLE ds.{table} (a INT); INSERT INTO ds.{table} VALUES (1)"
        )


def _reader(adapter: DuckDBAdapter, root: Path, name: str) -> object:
    target = ConnectionTarget("duckdb", "ds", root, credentials=name, read_only=True)
    return adapter.connect(target)


def test_each_reader_sees_only_its_own_file(tmp_path: Path) -> None:
    _file(tmp_path / "a.duckdb", "only_in_a")
    _file(tmp_path / "b.duckdb", "only_in_b")
    adapter = DuckDBAdapter()
    a, b = _reader(adapter, tmp_path, "a.duckdb"), _reader(adapter, tmp_path, "b.duckdb")
    try:
        assert adapter.fetch_columns(a, "ds", "only_in_a") is not None
        assert adapter.fetch_columns(a, "ds", "only_in_b") is None
        assert adapter.fetch_columns(b, "ds", "only_in_b") is not None
        assert adapter.query(b, "ds", Statement("SELECT a FROM {only_in_b}")) == [(1,)]
        with pytest.raises(DestinationError):
            adapter.execute(a, "ds", Statement("INSERT INTO {only_in_a} (a) VALUES (?)"), (2,))
    finally:
        adapter.close(a)
        adapter.close(b)
    with duckdb.connect(str(tmp_path / "a.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM ds.only_in_a").fetchone() == (1,)


def test_a_reader_never_creates_a_missing_file(tmp_path: Path) -> None:
    adapter = DuckDBAdapter()
    client = _reader(adapter, tmp_path, "absent.duckdb")
    assert adapter.fetch_columns(client, "ds", "anything") is None
    adapter.close(client)
    assert not (tmp_path / "absent.duckdb").exists()


def test_the_same_process_can_write_after_reading(tmp_path: Path) -> None:
    _file(tmp_path / "w.duckdb", "t")
    adapter = DuckDBAdapter()
    reader = _reader(adapter, tmp_path, "w.duckdb")
    assert adapter.fetch_columns(reader, "ds", "t") is not None
    adapter.close(reader)
    writer = adapter.connect(ConnectionTarget("duckdb", "ds", tmp_path, credentials="w.duckdb"))
    assert adapter.execute(writer, "ds", Statement("INSERT INTO {t} (a) VALUES (?)"), (2,)) == 1
    adapter.close(writer)


def test_reading_a_missing_file_does_not_load_the_driver(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from dlt_ops.adapters import ConnectionTarget\n"
        "from dltops_duckdb.adapter import DuckDBAdapter\n"
        "a = DuckDBAdapter()\n"
        f"t = ConnectionTarget('duckdb', 'ds', Path({str(tmp_path)!r}), 'none.duckdb', "
        "read_only=True)\n"
        "c = a.connect(t)\n"
        "assert a.fetch_columns(c, 'ds', '_dlt_ops_runs') is None\n"
        "a.close(c)\n"
        "print('duckdb' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert not (tmp_path / "none.duckdb").exists()
