"""Phase-1 scans are cached by content: unchanged modules are not re-parsed."""

from __future__ import annotations

import json
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


class _Payload:
    """Unpickling this runs code: what a planted cache file would carry."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # noqa: ANN204
        return (exec, (f"open({str(self.marker)!r}, 'w').write('ran')",))


@pytest.mark.parametrize("name", ["scan-cache.pickle", "scan-cache.json"])
def test_a_planted_cache_file_executes_nothing(tmp_path: Path, name: str) -> None:
    import pickle
    import subprocess
    import sys

    root = _project(tmp_path / "proj", "alpha")
    marker = tmp_path / "pwned"
    state = root / ".dlt-ops"
    state.mkdir()
    (state / name).write_bytes(pickle.dumps(_Payload(marker)))
    cli = "import sys; sys.argv = ['dlt-ops', *sys.argv[1:]]; from dlt_ops.cli import main; main()"
    proc = subprocess.run(
        [sys.executable, "-c", cli, "pipeline", "list"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "alpha" in proc.stdout
    assert not marker.exists(), "a planted cache file ran code"


def test_the_cache_is_plain_json(tmp_path: Path) -> None:
    import json

    root = _project(tmp_path, "alpha")
    discover(root)
    document = json.loads((root / ".dlt-ops" / scan_cache.CACHE_NAME).read_text("utf-8"))
    assert document["entries"], "nothing was cached"


@pytest.mark.parametrize(
    "document",
    [
        "[]",
        '{"format": 1}',
        '{"format": 1, "version": "0.0.0-other", "entries": {}}',
        # a foreign class name, and an entry that is not a module's facts
        '{"format": 1, "version": "%(v)s", '
        '"entries": {"k": {"$": "obj", "cls": "Popen", "v": {}}}}',
        '{"format": 1, "version": "%(v)s", "entries": {"k": ["not", "facts"]}}',
        '{"format": 1, "version": "%(v)s", "entries": {"k": {"$": "tuple", "v": 3}}}',
        # an untagged object where encode() writes only tagged ones
        '{"format": %(f)s, "version": "%(v)s", "entries": {"k": {"$": "tuple", "v": [{}]}}}',
    ],
)
def test_a_foreign_cache_is_a_miss(tmp_path: Path, parses: list[Path], document: str) -> None:
    from dlt_ops import __version__

    root = _project(tmp_path, "alpha")
    (root / ".dlt-ops").mkdir()
    (root / ".dlt-ops" / scan_cache.CACHE_NAME).write_text(
        document % {"v": __version__, "f": scan_cache._FORMAT}
    )
    assert sorted(discover(root).sources) == ["alpha"]
    assert len(parses) == 1, "a foreign cache was trusted"


CONTRACTS = [
    {"tables": "evolve", "columns": "freeze"},
    "evolve",
    {1: ("a", 2.5), "nested": {"set": frozenset({1, 2})}, "s": {3}},
    {"inf": float("inf"), "none": None, "flag": True},
]


@pytest.mark.parametrize("contract", CONTRACTS)
def test_literal_contracts_round_trip(contract: object) -> None:
    from dlt_ops.project.model import ContractDecl, ModuleFacts
    from dlt_ops.project.scan_codec import encode, loads

    facts = ModuleFacts(
        Path("/p/m.py"), contracts=(ContractDecl(Path("/p/m.py"), 3, contract, "f"),)
    )
    assert loads(json.dumps(encode(facts)), plain=0) == facts


@pytest.mark.parametrize(
    "text",
    [
        '{"$": "tuple", "v": [{"a": 1}]}',  # an untagged object outside a dataclass's fields
        '[{"$": "obj", "cls": "ColumnsRef", "v": {"$": "dict", "v": []}}]',  # fields not an object
        '{"$": "obj", "cls": "ColumnsRef", "v": {}}',  # fields missing
        '{"$": "set", "v": [[1]]}',  # an unhashable member
        '{"$": "tuple", "v": [], "x": 1}',  # a key encode() never writes
        '{"$": "nope", "v": []}',
    ],
)
def test_the_decoder_takes_only_what_encode_writes(text: str) -> None:
    from dlt_ops.project.scan_codec import CacheFormatError, loads

    with pytest.raises(CacheFormatError):
        loads(text, plain=0)


def test_unencodable_literals_are_not_cached(tmp_path: Path, parses: list[Path]) -> None:
    root = _project(tmp_path, "alpha")
    module = root / "p" / "source" / "alpha.py"
    module.write_text(
        SOURCE.replace("{name}", "alpha").replace(
            '@dlt.resource(name="rows")', '@dlt.resource(name="rows", schema_contract=b"x")'
        )
    )
    discover(root)
    discover(root)
    assert len(parses) == 2  # parsed each time, never pickled or half-encoded
