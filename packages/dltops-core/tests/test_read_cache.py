"""The ledger read cache file: exact round trips, no credentials, bounded, never trusted blindly."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

from dlt_ops.target.read_cache import MAX_READS, ReadCache, database_key


def test_rows_round_trip_exactly_through_the_file(tmp_path: Path) -> None:
    plus_two = timezone(timedelta(hours=2))
    rows = [
        ("run-1", datetime(2026, 11, 30, 9, 5, 1, 123456, tzinfo=UTC), None, 6, 1.5, True),
        ("run-2", datetime(2026, 11, 30, 9, 5, tzinfo=plus_two), date(2026, 1, 2), 0, 0.0, False),
    ]
    cache = ReadCache(tmp_path / "reads.json")
    cache.put("db", "stamp-1", "q", rows)
    cache.save()
    hit, value = ReadCache(tmp_path / "reads.json").get("db", "stamp-1", "q")
    assert hit and [tuple(r) for r in value] == rows
    assert [r[1].utcoffset() for r in value] == [r[1].utcoffset() for r in rows]


def test_another_stamp_is_a_miss_and_replaces_the_old_answers(tmp_path: Path) -> None:
    cache = ReadCache(tmp_path / "reads.json")
    cache.put("db", "s1", "q", [[1]])
    assert cache.get("db", "s2", "q") == (False, None)
    cache.put("db", "s2", "other", [[2]])
    assert cache.get("db", "s1", "q") == (False, None)  # the old stamp's answers are gone
    assert cache.get("db", "s2", "other") == (True, [[2]])


def test_values_json_cannot_round_trip_are_not_cached(tmp_path: Path) -> None:
    cache = ReadCache(tmp_path / "reads.json")
    cache.put("db", "s", "q", [(Decimal("1.10"),)])
    assert cache.get("db", "s", "q") == (False, None)
    cache.save()
    assert not (tmp_path / "reads.json").exists()  # nothing changed, nothing written


def test_databases_are_named_by_hash_never_by_credentials(tmp_path: Path) -> None:
    key = ("postgres", "ds", "{'password': 'pl4nted-s3cret', 'host': 'db.internal'}")
    cache = ReadCache(tmp_path / "reads.json")
    cache.put(database_key(key), "s", "q", [[1]])
    cache.save()
    text = (tmp_path / "reads.json").read_text()
    assert "pl4nted-s3cret" not in text and "db.internal" not in text
    assert database_key(key) == database_key(key) != database_key(("postgres", "ds", "other"))


def test_reads_per_database_are_bounded(tmp_path: Path) -> None:
    cache = ReadCache(tmp_path / "reads.json")
    for i in range(MAX_READS + 5):
        cache.put("db", "s", f"q{i}", [[i]])
    cache.save()
    doc = json.loads((tmp_path / "reads.json").read_text())
    assert len(doc["databases"]["db"]["reads"]) == MAX_READS
    assert cache.get("db", "s", f"q{MAX_READS + 4}") == (True, [[MAX_READS + 4]])
    assert cache.get("db", "s", "q0") == (False, None)  # the oldest went first


def test_an_unwritable_state_directory_only_means_no_cache(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    cache = ReadCache(blocker / "reads.json")
    cache.put("db", "s", "q", [[1]])
    cache.save()  # no exception: the command's answer matters, the cache does not
    assert cache.get("db", "s", "q") == (True, [[1]])
