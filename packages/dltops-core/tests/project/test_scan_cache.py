"""Phase-1 scans are cached by content: unchanged modules are not re-parsed."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlt_ops.project import scan_cache
from dlt_ops.project.discovery import discover

SOURCE = """
import dlt


@dlt.resource(name="rows")
def rows():
    yield [{"a": 1}]


@dlt.source(name="{name}")
def {name}_source():
    return rows
"""


def _project(root: Path, *names: str) -> Path:
    (root / ".dlt").mkdir(parents=True, exist_ok=True)
    (root / ".dlt" / "config.toml").write_text("[dlt_ops]\n")
    for name in names:
        path = root / "p" / "source" / f"{name}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SOURCE.replace("{name}", name))
    return root


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    seen: list[Path] = []
    real = scan_cache.scan_text

    def counting(path: Path, text: str):  # noqa: ANN202
        seen.append(path)
        return real(path, text)

    monkeypatch.setattr(scan_cache, "scan_text", counting)
    return seen


def test_unchanged_modules_are_not_reparsed(tmp_path: Path, parses: list[Path]) -> None:
    root = _project(tmp_path, "alpha", "beta")
    first = discover(root)
    assert len(parses) == 2
    second = discover(root)
    assert len(parses) == 2, "an unchanged project was parsed again"
    assert sorted(second.sources) == sorted(first.sources) == ["alpha", "beta"]
    assert second.sources["alpha"].static_resources == ("rows",)


def test_a_changed_module_is_reparsed(tmp_path: Path, parses: list[Path]) -> None:
    root = _project(tmp_path, "alpha")
    discover(root)
    module = root / "p" / "source" / "alpha.py"
    module.write_text(SOURCE.replace("{name}", "alpha").replace('name="rows"', 'name="lines"'))
    project = discover(root)
    assert parses == [module, module]
    assert project.sources["alpha"].static_resources == ("lines",)


def test_a_corrupt_cache_is_ignored(tmp_path: Path, parses: list[Path]) -> None:
    root = _project(tmp_path, "alpha")
    discover(root)
    (root / ".dlt-ops" / scan_cache.CACHE_NAME).write_bytes(b"not a pickle")
    assert sorted(discover(root).sources) == ["alpha"]
    assert len(parses) == 2
