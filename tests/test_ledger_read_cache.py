"""`status` and `runs list` answer from the read cache while a DuckDB ledger is unchanged,
and never from it once anything wrote to the file."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import EVENTS_ON_DUCKDB as CONFIG
from tests.conftest import age_databases, imported_modules

CACHE = Path(".dlt-ops") / "ledger-reads.json"
_FORMAT = 3  # what this version writes (dlt_ops.target.read_cache)
#: the interpreter's own import report: it shows whether the status process loaded the driver
IMPORTS = {"PYTHONPROFILEIMPORTTIME": "1"}


def _status(cli, root: Path) -> tuple[list[dict], set[str]]:  # noqa: ANN001
    proc = cli("pipeline", "status", "--json", cwd=root, env=IMPORTS)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout), imported_modules(proc.stderr)


def _run(cli, root: Path) -> str:  # noqa: ANN001
    proc = cli("pipeline", "run", "-s", "events_src", "-y", "--json", cwd=root)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)["run_id"]


def test_a_quiet_ledger_is_read_once_then_answered_without_the_driver(
    project, templates, cli
) -> None:  # noqa: ANN001, E501
    root = project(CONFIG, {"events_src": templates["events"]})
    first = _run(cli, root)
    fresh, loaded = _status(cli, root)  # written just now: read from the file, no stamp
    assert "duckdb" in loaded and not (root / CACHE).exists()
    age_databases(root)
    read, loaded = _status(cli, root)  # quiet: read from the file, remembered
    assert "duckdb" in loaded and (root / CACHE).exists()
    cached, loaded = _status(cli, root)
    assert "duckdb" not in loaded  # answered from the cache
    assert "importlib.metadata" not in loaded  # plugins found by reading dist-info directly
    assert cached == read == fresh
    assert [r["run_id"] for r in cached[0]["runs"]] == [first]
    listed = cli("runs", "list", cwd=root, env=IMPORTS)
    assert listed.returncode == 0 and first[:12] in listed.stdout


def test_any_write_is_seen_by_the_next_status(project, templates, cli) -> None:  # noqa: ANN001
    root = project(CONFIG, {"events_src": templates["events"]})
    first = _run(cli, root)
    age_databases(root)
    _status(cli, root)  # cached under the quiet file's stamp
    second = _run(cli, root)
    # at once (the file is fresh: no stamp) and once the file is quiet again (a new stamp)
    for quiet in (False, True):
        if quiet:
            age_databases(root)
        doc, loaded = _status(cli, root)
        assert "duckdb" in loaded
        assert [r["run_id"] for r in doc[0]["runs"]] == [second, first]
    doc, loaded = _status(cli, root)
    assert "duckdb" not in loaded and [r["run_id"] for r in doc[0]["runs"]] == [second, first]


def test_a_garbled_or_foreign_cache_file_is_ignored_and_replaced(project, templates, cli) -> None:  # noqa: ANN001
    root = project(CONFIG, {"events_src": templates["events"]})
    run_id = _run(cli, root)
    age_databases(root)
    for planted in ("not json {", json.dumps({"format": 99, "databases": {"x": 1}}), "[]"):
        (root / CACHE).write_text(planted)
        doc, loaded = _status(cli, root)
        assert "duckdb" in loaded and [r["run_id"] for r in doc[0]["runs"]] == [run_id]
        assert json.loads((root / CACHE).read_text())["format"] == _FORMAT
