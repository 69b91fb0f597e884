"""README command 2 hands test files to its workers longest first (root ``conftest.py``), by the
seconds ``tests/durations.json`` recorded; these check that order and that record."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]


def _root_conftest():  # noqa: ANN202
    spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _items(*nodeids: str) -> list[SimpleNamespace]:
    return [SimpleNamespace(nodeid=n) for n in nodeids]


def test_files_go_longest_first_and_keep_their_tests_together_in_order() -> None:
    items = _items("a.py::t1", "a.py::t2", "b.py::t1", "c.py::t1", "c.py::t2", "d.py::t1")
    seconds = {"a.py": 1.0, "b.py": 30.0, "c.py": 400.0, "d.py": 1.0}
    ordered = _root_conftest().longest_files_first(items, seconds)
    assert [i.nodeid for i in ordered] == [
        "c.py::t1", "c.py::t2", "b.py::t1", "a.py::t1", "a.py::t2", "d.py::t1",
    ]  # fmt: skip


def test_a_file_with_no_record_goes_first() -> None:
    items = _items("old.py::t", "new.py::t")
    ordered = _root_conftest().longest_files_first(items, {"old.py": 500.0})
    assert [i.nodeid for i in ordered] == ["new.py::t", "old.py::t"]


def test_the_record_names_test_files_that_exist() -> None:
    record = json.loads((ROOT / "tests" / "durations.json").read_text())["files"]
    assert len(record) > 50, "tests/durations.json holds too few files to order the suite by"
    gone = [path for path in record if not (ROOT / path).is_file()]
    assert not gone, f"tests/durations.json names files that no longer exist: {gone}; refresh it"
