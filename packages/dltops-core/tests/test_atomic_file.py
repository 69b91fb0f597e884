from __future__ import annotations

import threading
from pathlib import Path

import pytest

from dlt_ops.atomic_file import write_atomically


def test_replaces_the_content_and_creates_the_directory(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "cache.json"
    write_atomically(path, "one")
    write_atomically(path, "two")
    assert path.read_text() == "two"
    assert [p.name for p in path.parent.iterdir()] == ["cache.json"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text("old\n")
    with pytest.raises(UnicodeEncodeError):
        write_atomically(path, "half \udcff written")  # not encodable: the write fails midway
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["runs.jsonl"]


def test_concurrent_writers_never_share_a_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "book.json"
    texts = [str(i) * 50_000 for i in range(8)]
    threads = [threading.Thread(target=write_atomically, args=(path, t)) for t in texts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert path.read_text() in texts  # one writer's whole text, never a mix
    assert [p.name for p in tmp_path.iterdir()] == ["book.json"]
