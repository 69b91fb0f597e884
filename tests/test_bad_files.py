"""A malformed file among good ones, read by dlt's filesystem readers under dlt-ops.

The error names the file and its real line (pandas' line for CSV, the file's line for JSONL,
where the JSON parser says "line 1"); ``on_bad_file = "skip"`` loads the good files and lists
the bad one in the receipt; ``"quarantine"`` keeps a copy of it too.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.conftest import run_cli, write_project

pytestmark = pytest.mark.integration

CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "raw"

[sources.files.dlt_ops]
schedule = "@daily"
{policy}
[sources.files.dlt_ops.rule_exemptions]
pydantic_columns_required = "test files: columns typed by the reader"
"""

FILES = """
import dlt
from dlt.sources.filesystem import filesystem, {reader}


@dlt.source(name="files")
def files_source(bucket_url: str = dlt.config.value):
    return (filesystem(bucket_url=bucket_url, file_glob="*") | {reader}()).with_name("orders")
"""


def _csv(folder: Path, name: str, rows: int, bad_line: int | None = None) -> None:
    lines = ["id,day,amount"] + [f"{name}-{i},2026-01-01,{i}" for i in range(rows)]
    if bad_line is not None:
        lines[bad_line - 1] = "oops,2026-01-01,1,extra"  # one field too many
    (folder / name).write_text("\n".join(lines) + "\n")


def _csv_gz(folder: Path, name: str, rows: int, bad_line: int | None = None) -> None:
    _csv(folder, name, rows, bad_line)
    path = folder / name
    with gzip.open(folder / f"{name}.gz", "wb") as out:
        out.write(path.read_bytes())
    path.unlink()


def _jsonl(folder: Path, name: str, rows: int, bad_line: int | None = None) -> None:
    lines = [json.dumps({"id": f"{name}-{i}", "amount": i}) for i in range(rows)]
    if bad_line is not None:
        lines[bad_line - 1] = '{"id": "oops", "amount": '
    (folder / name).write_text("\n".join(lines) + "\n")


def _project(tmp_path: Path, reader: str, policy: str | None) -> tuple[Path, dict[str, str]]:
    folder = tmp_path / "data"
    folder.mkdir()
    setting = f'on_bad_file = "{policy}"\n' if policy else ""
    config = CONFIG.replace("{policy}", setting)
    root = write_project(tmp_path / "proj", config, {"files": FILES.replace("{reader}", reader)})
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOURCES__")}
    env.update(SOURCES__FILES__BUCKET_URL=str(folder), DLT_DATA_DIR=str(tmp_path / "dlt"))
    return root, env


def _run(root: Path, env: dict[str, str]) -> Any:
    return run_cli("--root", str(root), "pipeline", "run", "-s", "files", "-y", cwd=root, env=env)


def _ids(root: Path) -> list[str]:
    with duckdb.connect(str(root / "files_pipeline.duckdb"), read_only=True) as con:
        return sorted(r[0] for r in con.execute("SELECT id FROM raw.orders").fetchall())


@pytest.mark.parametrize(
    ("reader", "write", "name", "line"),
    [
        ("read_csv", _csv, "orders_2026-01-07.csv", 503),
        ("read_csv", _csv_gz, "orders_2026-01-08.csv", 77),
        ("read_jsonl", _jsonl, "b.jsonl", 451),
    ],
)
def test_the_error_names_the_file_and_its_real_line(
    tmp_path: Path, reader: str, write: Any, name: str, line: int
) -> None:
    root, env = _project(tmp_path, reader, None)
    folder = tmp_path / "data"
    write(folder, "a_good", 20)
    write(folder, name, 900, bad_line=line)
    write(folder, "z_good", 20)
    done = _run(root, env)
    assert done.returncode == 1, done.stderr[-2000:]
    shown = f"{name}.gz" if write is _csv_gz else name
    assert f"resource 'orders' cannot read {shown}, line {line}:" in done.stderr
    assert 'on_bad_file = "skip"' in done.stderr


@pytest.mark.parametrize("policy", ["skip", "quarantine"])
def test_skip_loads_the_good_files_and_the_receipt_lists_the_bad_one(
    tmp_path: Path, policy: str
) -> None:
    root, env = _project(tmp_path, "read_csv", policy)
    folder = tmp_path / "data"
    _csv(folder, "a.csv", 3)
    _csv(folder, "bad.csv", 30, bad_line=25)  # its first 23 rows parse: none may load
    _csv(folder, "c.csv", 2)
    done = _run(root, env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert _ids(root) == sorted([f"a.csv-{i}" for i in range(3)] + ["c.csv-0", "c.csv-1"])

    shown = run_cli("--root", str(root), "runs", "show", "last", "-s", "files", "--json",
                    cwd=root, env=env)  # fmt: skip
    (row,) = json.loads(shown.stdout)["receipt"]
    (bad,) = json.loads(row["skipped_files"])
    assert (bad["file"], bad["line"]) == ("bad.csv", 25)
    assert "Expected 3 fields in line 25, saw 4" in bad["error"]
    assert row["records_in"] == row["rows_loaded"] == 5  # the skipped rows never entered
    text = run_cli("--root", str(root), "runs", "show", "last", "-s", "files", cwd=root, env=env)
    assert "! orders: skipped bad.csv (line 25)" in text.stdout
    if policy == "quarantine":
        kept = root / bad["quarantined"]
        assert kept.read_bytes() == (folder / "bad.csv").read_bytes()
        assert kept.parent.parent.name == "files" and kept.parent.parent.parent.name == "quarantine"
    else:
        assert bad["quarantined"] is None
        assert not (root / ".dlt-ops" / "quarantine").exists()
