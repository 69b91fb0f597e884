"""The ledger read cache file: exact round trips, no credentials, bounded, never trusted blindly."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pytest

from dlt_ops.target.read_cache import _FORMAT, MAX_READS, ReadCache, _slot, database_key


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


def test_an_answer_several_reads_share_is_written_once(tmp_path: Path) -> None:
    """Status, the due check and the freshness check read the same rows by different
    statements: the file keeps that answer once per database, and each read finds it."""
    at = datetime(2026, 1, 1, tzinfo=UTC)
    rows = [[f"row-{i}-of-src", at + timedelta(hours=i), i] for i in range(50)]
    cache = ReadCache(tmp_path / "reads.json")
    for read in ("status", "due", "freshness"):
        cache.put("db", "s", read, rows)
    cache.put("db", "s", "count", [[50]])
    cache.put("other", "s", "status", rows)
    cache.save()
    text = (tmp_path / "reads.json").read_text()
    assert text.count("row-49-of-src") == 2  # once per database
    again = ReadCache(tmp_path / "reads.json")
    for read in ("status", "due", "freshness"):
        assert again.get("db", "s", read) == (True, rows)
    assert again.get("db", "s", "due")[1] is again.get("db", "s", "status")[1]  # decoded once
    assert again.get("other", "s", "status")[1] is again.get("db", "s", "status")[1]
    assert again.get("db", "s", "count") == (True, [[50]])
    assert again.get("other", "s", "status") == (True, rows)
    again.put("db", "s", "new", [[1]])  # a file read back, added to and written again
    again.save()
    third = ReadCache(tmp_path / "reads.json")
    assert [third.get("db", "s", r)[1] for r in ("due", "new")] == [rows, [[1]]]


def test_an_unwritable_state_directory_only_means_no_cache(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    cache = ReadCache(blocker / "reads.json")
    cache.put("db", "s", "q", [[1]])
    cache.save()  # no exception: the command's answer matters, the cache does not
    assert cache.get("db", "s", "q") == (True, [[1]])


def test_a_file_of_another_format_or_shape_is_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "reads.json"
    good = {"db": {"stamp": "s", "reads": {"q": [[1]]}}}
    odd_reads = [
        {"format": _FORMAT, "databases": {"db": {"stamp": "s", "reads": reads, "answers": ["1"]}}}
        for reads in (["q"], "q", None, {_slot("q"): 1}, {_slot("q"): True}, {_slot("q"): None})
    ]
    no_reads = {"format": _FORMAT, "databases": {"db": {"stamp": "s"}}}
    for doc in (
        {"format": 999, "databases": good}, [good], {"format": 1, "databases": [good]},
        *odd_reads, no_reads,
    ):  # fmt: skip
        path.write_text(json.dumps(doc))
        cache = ReadCache(path)
        assert cache.get("db", "s", "q") == (False, None), doc
        cache.put("db", "s", "q", [[2]])  # and it starts over, usable
        assert cache.get("db", "s", "q") == (True, [[2]])


def test_an_answer_this_version_cannot_decode_is_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "reads.json"
    for broken in ("[[1]", '[{"x": 1}]', '[{"d": "not a date"}]'):
        cache = ReadCache(path)
        cache.put("db", "s", "q", [[1]])
        cache.save()
        doc = json.loads(path.read_text())
        answers = doc["databases"]["db"]["answers"]
        answers[:] = [broken] * len(answers)  # e.g. written by a later version, or cut short
        path.write_text(json.dumps(doc))
        assert ReadCache(path).get("db", "s", "q") == (False, None), broken


def test_every_pool_of_a_process_shares_one_cache_per_file(tmp_path: Path) -> None:
    first = ReadCache.shared(tmp_path / "a" / "reads.json")
    assert ReadCache.shared(tmp_path / "a" / "reads.json") is first
    assert ReadCache.shared(tmp_path / "b" / "reads.json") is not first
    first.put("db", "s", "q", [[1]])  # not saved yet: the next pool sees it all the same
    assert ReadCache.shared(tmp_path / "a" / "reads.json").get("db", "s", "q") == (True, [[1]])


def test_databases_are_bounded_the_least_recently_stamped_going_first(tmp_path: Path) -> None:
    from dlt_ops.target.read_cache import MAX_DATABASES

    cache = ReadCache(tmp_path / "reads.json")
    for i in range(MAX_DATABASES):
        cache.put(f"db{i}", "s", "q", [[i]])
    assert cache.get("db0", "s", "q") == (True, [[0]])  # exactly MAX_DATABASES are kept
    cache.put("db0", "s", "q2", [[0]])  # db0 stamped again: now the most recent
    cache.put("one-more", "s", "q", [[1]])
    assert cache.get("db0", "s", "q2") == (True, [[0]])
    assert cache.get("db1", "s", "q") == (False, None)  # the least recent went
    assert cache.get(f"db{MAX_DATABASES - 1}", "s", "q") == (True, [[MAX_DATABASES - 1]])


def test_an_unchanged_cache_is_not_written_again(tmp_path: Path) -> None:
    path = tmp_path / "reads.json"
    cache = ReadCache(path)
    cache.put("db", "s", "q", [[1]])
    cache.save()
    path.unlink()
    cache.save()  # nothing changed since: nothing written
    assert not path.exists()


def test_a_cache_that_cannot_be_saved_says_so_at_debug_level(tmp_path: Path) -> None:
    from structlog.testing import capture_logs

    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    cache = ReadCache(blocker / "reads.json")
    cache.put("db", "s", "q", [[1]])
    with capture_logs() as logs:
        cache.save()
    (event,) = logs
    assert event["event"] == "ledger.read_cache_not_saved" and event["log_level"] == "debug"
    assert event["path"] == str(blocker / "reads.json") and "not-a-dir" in event["error"]


# -- SnapshotSession on a real DuckDB file ----------------------------------------------------


def _duckdb_file(path: Path, rows: int) -> None:
    import duckdb

    con = duckdb.connect(str(path))
    con.execute("CREATE SCHEMA IF NOT EXISTS raw")
    con.execute("CREATE OR REPLACE TABLE raw.t AS SELECT range AS x FROM range(?)", [rows])
    con.execute("CREATE OR REPLACE TABLE raw.u (name VARCHAR, seen TIMESTAMP)")
    con.close()


class _Snapshots:
    """SnapshotSessions over one DuckDB file and cache file, counting the connections made."""

    def __init__(self, tmp_path: Path, db: Path) -> None:
        from dlt_ops.adapters import ConnectionTarget
        from dltops_duckdb.adapter import DuckDBAdapter

        self.adapter = DuckDBAdapter()
        self.target = ConnectionTarget("duckdb", "raw", tmp_path, str(db), read_only=True)
        self.path, self.connects = tmp_path / "reads.json", 0

    def _connect(self) -> object:
        self.connects += 1
        return self.adapter.connect(self.target)

    def session(self, database: str = "db", stamp: str = "s1", cache: ReadCache | None = None):  # noqa: ANN201
        from dlt_ops.target.read_cache import SnapshotSession

        cache = cache or ReadCache(self.path)
        return cache, SnapshotSession(
            self.adapter, self.target, self._connect, cache, database, stamp
        )


def test_a_snapshot_answers_a_repeated_read_without_connecting(tmp_path: Path) -> None:
    from dlt_ops.adapters.statements import Statement

    _duckdb_file(tmp_path / "x.duckdb", 3)
    snaps = _Snapshots(tmp_path, tmp_path / "x.duckdb")
    below = Statement("SELECT count(*) FROM raw.t WHERE x < ?")
    cache, first = snaps.session()
    assert first.query(Statement("SELECT count(*) FROM raw.t")) == [(3,)]
    assert first.query(Statement("SELECT max(x) FROM raw.t")) == [(2,)]
    assert first.query(below, 1) == [(1,)] and first.query(below, 2) == [(2,)]
    assert [(c.name, c.data_type) for c in first.fetch_columns("u")] == [
        ("name", "VARCHAR"), ("seen", "TIMESTAMP")
    ]  # fmt: skip
    assert first.fetch_columns("absent") is None
    first.close()
    cache.save()
    assert snaps.connects == 1
    _, second = snaps.session()  # the next command, same stamp
    assert second.query(Statement("SELECT count(*) FROM raw.t")) == [(3,)]
    assert second.query(Statement("SELECT max(x) FROM raw.t")) == [(2,)]
    assert second.query(below, 2) == [(2,)] and second.query(below, 1) == [(1,)]
    assert [c.name for c in second.fetch_columns("u")] == ["name", "seen"]
    assert [c.data_type for c in second.fetch_columns("u")] == ["VARCHAR", "TIMESTAMP"]
    assert snaps.connects == 1  # every answer so far came from the cache
    assert [c.name for c in second.fetch_columns("t")] == ["x"]  # another table: read
    assert second.fetch_columns("absent") is None
    assert snaps.connects == 2  # only for raw.t's columns
    second.close()


def test_a_snapshot_never_answers_for_another_stamp_or_database(tmp_path: Path) -> None:
    from dlt_ops.adapters.statements import Statement

    count = Statement("SELECT count(*) FROM raw.t")
    _duckdb_file(tmp_path / "x.duckdb", 3)
    snaps = _Snapshots(tmp_path, tmp_path / "x.duckdb")
    cache = ReadCache(snaps.path)
    cache.put("db", "s0", '["query","SELECT count(*) FROM raw.t",[]]', [[99]])
    cache.put("other", "s1", '["query","SELECT count(*) FROM raw.t",[]]', [[98]])
    _, session = snaps.session(cache=cache)
    assert session.query(count) == [(3,)]  # neither the old stamp's answer nor another db's
    session.close()
    assert cache.get("other", "s1", '["query","SELECT count(*) FROM raw.t",[]]') == (True, [[98]])


def test_a_snapshot_closes_only_a_connection_it_opened(tmp_path: Path) -> None:
    import duckdb

    from dlt_ops.adapters.statements import Statement

    db = tmp_path / "x.duckdb"
    _duckdb_file(db, 1)
    snaps = _Snapshots(tmp_path, db)
    _, idle = snaps.session()
    idle.close()  # never connected: nothing to close
    _, used = snaps.session(stamp="s2")
    assert used.query(Statement("SELECT count(*) FROM raw.t")) == [(1,)]
    used.close()
    duckdb.connect(str(db)).close()  # a writer may open the file: the reader let it go
    failing = _Snapshots(tmp_path, tmp_path)  # a directory: no database opens there
    _, broken = failing.session(stamp="s3")
    with pytest.raises(Exception) as first:  # noqa: PT011 - the driver's own error
        broken.query(Statement("SELECT 1"))
    with pytest.raises(Exception) as again:  # noqa: PT011
        broken.query(Statement("SELECT 2"))
    assert again.value is first.value and failing.connects == 1  # raised again, not retried
    broken.close()


def test_what_a_snapshot_derived_is_built_once_per_stamp_in_a_process(tmp_path: Path) -> None:
    """``remember``: a command reading a ledger in several passes builds its rows once; a new
    stamp (any write) builds them again; a plain session builds them every time."""
    from dlt_ops.adapters import DestinationSession

    _duckdb_file(tmp_path / "x.duckdb", 3)
    snaps = _Snapshots(tmp_path, tmp_path / "x.duckdb")
    builds: list[str] = []

    def build(label: str) -> list[str]:
        builds.append(label)
        return [label]

    cache, first = snaps.session()
    assert first.remember(("k", 1), lambda: build("a")) == ["a"]
    _, second = snaps.session(cache=cache)  # the next pass of the same command
    assert second.remember(("k", 1), lambda: build("b")) == ["a"]
    assert second.remember(("k", 2), lambda: build("c")) == ["c"]  # another key: built
    _, changed = snaps.session(stamp="s2", cache=cache)
    assert changed.remember(("k", 1), lambda: build("d")) == ["d"]
    assert builds == ["a", "c", "d"] and snaps.connects == 0
    plain = DestinationSession(snaps.adapter, snaps.adapter.connect(snaps.target), "raw")
    assert plain.remember(("k", 1), lambda: build("e")) == ["e"]
    assert plain.remember(("k", 1), lambda: build("f")) == ["f"]
    plain.close()


def test_a_snapshot_decodes_a_repeated_answer_once_per_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dlt_ops.target import read_cache

    cache = ReadCache(tmp_path / "reads.json")
    cache.put("db", "s", "q", [[1, "a"]])
    cache.save()
    again = ReadCache(tmp_path / "reads.json")
    decoded: list[str] = []
    real = read_cache._decode
    monkeypatch.setattr(read_cache, "_decode", lambda t: decoded.append(t) or real(t))
    assert again.get("db", "s", "q") == (True, [[1, "a"]])
    assert again.get("db", "s", "q") == (True, [[1, "a"]])
    assert len(decoded) == 1
    again.put("db", "s2", "q", [[2, "b"]])  # a write: the old stamp's answers are gone
    assert again.get("db", "s", "q") == (False, None)
    assert again.get("db", "s2", "q") == (True, [[2, "b"]])


def test_what_a_shared_answer_becomes_is_built_once(tmp_path: Path) -> None:
    """Every ledger of a fleet lists its runs table alike: a value ``get`` returned for two
    databases is the same object, and what ``derived`` builds from it is built once."""
    cache = ReadCache(tmp_path / "reads.json")
    columns = [["run_id", "VARCHAR"], ["started_at", "TIMESTAMP"]]
    for db in ("a", "b"):
        cache.put(db, "s", "columns", columns)
    cache.save()
    again = ReadCache(tmp_path / "reads.json")
    builds: list[object] = []

    def build(found: list[list[str]]) -> tuple[str, ...]:
        builds.append(found)
        return tuple(name for name, _ in found)

    names = [again.derived(again.get(db, "s", "columns")[1], build) for db in ("a", "b")]
    assert names == [("run_id", "started_at")] * 2 and len(builds) == 1
    assert again.derived([["other", "INT"]], build) == ("other",)  # another value: its own
    assert len(builds) == 2
