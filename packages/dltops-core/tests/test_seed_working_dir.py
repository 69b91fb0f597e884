"""A backfill chunk's new working dir starts from the previous chunk's state and schemas."""

from __future__ import annotations

from pathlib import Path

from dlt_ops.runner.working_dir import seed_from_sibling


def _completed_chunk_dir(path: Path) -> Path:
    (path / "schemas").mkdir(parents=True)
    (path / "schemas" / "src.schema.json").write_text('{"name": "src"}')
    (path / "state.json").write_text('{"_state_version": 7}')
    (path / "load" / "loaded" / "123").mkdir(parents=True)  # a loaded package: not copied
    (path / "trace.pickle").write_bytes(b"not ours to copy")
    return path


def test_only_state_and_schemas_are_copied(tmp_path: Path) -> None:
    sibling = _completed_chunk_dir(tmp_path / "chunk1" / "p")
    target = tmp_path / "chunk2" / "p"
    assert seed_from_sibling(target, sibling)
    assert (target / "state.json").read_text() == '{"_state_version": 7}'
    assert (target / "schemas" / "src.schema.json").read_text() == '{"name": "src"}'
    assert sorted(p.name for p in target.iterdir()) == ["schemas", "state.json"]
    assert not (tmp_path / "chunk2" / "p.seeding").exists()


def test_an_existing_dir_is_never_seeded(tmp_path: Path) -> None:
    sibling = _completed_chunk_dir(tmp_path / "chunk1" / "p")
    target = tmp_path / "chunk2" / "p"
    (target / "normalize" / "extracted" / "9").mkdir(parents=True)  # a retried chunk's package
    assert not seed_from_sibling(target, sibling)
    assert not (target / "state.json").exists()


def test_a_sibling_without_state_seeds_nothing(tmp_path: Path) -> None:
    empty = tmp_path / "chunk1" / "p"
    empty.mkdir(parents=True)
    assert not seed_from_sibling(tmp_path / "chunk2" / "p", empty)
    assert not (tmp_path / "chunk2" / "p").exists()
