"""0.1's scratch sweep (``cleanup_old_dlt_files``), without Airflow: only ``dlt_*`` entries
older than the threshold go, at any depth; a missing directory is an error naming the option."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dlt_ops.airflow.scratch import ScratchDirMissingError, sweep_scratch
from dlt_ops.errors import DltOpsError

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)


def _aged(path: Path, days: float) -> Path:
    stamp = (NOW - timedelta(days=days)).timestamp()
    os.utime(path, (stamp, stamp), follow_symlinks=False)
    return path


def test_only_dlt_entries_older_than_the_threshold_are_removed(tmp_path: Path) -> None:
    old_dir = tmp_path / "dlt_pipeline_a"
    (old_dir / "inner").mkdir(parents=True)
    (old_dir / "inner" / "dlt_state.json").write_text("{}")
    _aged(old_dir, 4)
    (tmp_path / "dlt_fresh").mkdir()
    _aged(tmp_path / "dlt_fresh", 1)
    (tmp_path / "dlt_old.log").write_text("x")
    _aged(tmp_path / "dlt_old.log", 10)
    (tmp_path / "other_old").mkdir()
    _aged(tmp_path / "other_old", 10)
    nested = tmp_path / "keep" / "dlt_deep_old"
    nested.mkdir(parents=True)
    _aged(nested, 5)
    (tmp_path / "dlt_link").symlink_to(tmp_path / "other_old")
    _aged(tmp_path / "dlt_link", 9)

    swept = sweep_scratch(tmp_path, older_than=timedelta(days=3), now=NOW)

    left = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert left == ["dlt_fresh", "keep", "other_old"]
    assert (swept.dirs, swept.files) == (2, 2)  # the link goes, its target stays


def test_the_threshold_is_exclusive_of_newer_entries(tmp_path: Path) -> None:
    (tmp_path / "dlt_edge").mkdir()
    _aged(tmp_path / "dlt_edge", 2.9)
    assert sweep_scratch(tmp_path, older_than=timedelta(days=3), now=NOW).dirs == 0
    assert sweep_scratch(tmp_path, older_than=timedelta(days=2), now=NOW).dirs == 1


def test_a_missing_directory_is_a_value_error_naming_the_option(tmp_path: Path) -> None:
    with pytest.raises(ScratchDirMissingError, match="cleanup_data_dir") as raised:
        sweep_scratch(tmp_path / "nowhere", older_than=timedelta(days=3))
    assert isinstance(raised.value, ValueError) and isinstance(raised.value, DltOpsError)
