"""``[sources.<X>.dlt_ops] backfill_start / backfill_end / backfill_chunk`` (issue 31): the
fixed window Dagster partitions into backfill chunks, checked when the config loads."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from dlt_ops.config import load_project_config
from dlt_ops.config.backfill_window import chunk_cron
from dlt_ops.errors import ConfigError, ConfigValueError


def _load(tmp_path: Path, keys: str) -> object:
    (tmp_path / ".dlt").mkdir(exist_ok=True)
    (tmp_path / ".dlt" / "config.toml").write_text(
        f'[dlt_ops]\ndefault_destination = "duckdb"\n\n[sources.s.dlt_ops]\n{keys}\n'
    )
    return load_project_config(tmp_path).source("s")


def test_toml_datetimes_and_iso_strings_become_utc(tmp_path: Path) -> None:
    cfg = _load(tmp_path, 'backfill_start = 2026-01-01T01:00:00+01:00\n'
                          'backfill_end = "2026-01-13T00:00:00Z"')  # fmt: skip
    assert cfg.backfill_start == datetime(2026, 1, 1, tzinfo=UTC)
    assert cfg.backfill_end == datetime(2026, 1, 13, tzinfo=UTC)
    assert cfg.backfill_chunk == "1d"


def test_unset_means_no_window(tmp_path: Path) -> None:
    cfg = _load(tmp_path, 'schedule = "@daily"')
    assert (cfg.backfill_start, cfg.backfill_end) == (None, None)


@pytest.mark.parametrize(
    ("keys", "error", "says"),
    [
        ('backfill_start = "2026-01-01T00:00:00Z"', ConfigError, "without backfill_end"),
        ('backfill_end = "2026-01-02T00:00:00Z"', ConfigError, "without backfill_start"),
        ('backfill_start = "2026-01-05T00:00:00Z"\nbackfill_end = "2026-01-01T00:00:00Z"',
         ConfigError, "must be before backfill_end"),
        ('backfill_start = "2026-01-01T00:00:00"\nbackfill_end = "2026-01-02T00:00:00Z"',
         ConfigValueError, "timezone-aware"),
        ('backfill_start = "2026-01-01T06:00:00Z"\nbackfill_end = "2026-01-02T00:00:00Z"',
         ConfigValueError, "on a 1d boundary"),
        ('backfill_start = "2026-01-01T00:00:00Z"\nbackfill_end = "2026-01-02T00:00:00Z"\n'
         'backfill_chunk = "2d"', ConfigValueError, "N dividing 24"),
    ],
)  # fmt: skip
def test_a_broken_window_is_a_config_error(tmp_path: Path, keys: str, error: type,
                                           says: str) -> None:  # fmt: skip
    with pytest.raises(error, match=says):
        _load(tmp_path, keys)


def test_hour_chunks_align_on_their_own_boundary(tmp_path: Path) -> None:
    keys = 'backfill_start = "2026-01-01T06:00:00Z"\nbackfill_end = "2026-01-01T18:00:00Z"\n'
    cfg = _load(tmp_path, keys + 'backfill_chunk = "6h"')
    assert cfg.backfill_chunk == "6h"


@pytest.mark.parametrize(
    ("chunk", "cron"),
    [("1d", "0 0 * * *"), ("1h", "0 * * * *"), ("6h", "0 */6 * * *"), ("15m", "*/15 * * * *"),
     ("2d", None), ("5h", None), ("7m", None), ("0h", None), ("1w", None)],
)  # fmt: skip
def test_chunk_cron(chunk: str, cron: str | None) -> None:
    assert chunk_cron(chunk) == cron
