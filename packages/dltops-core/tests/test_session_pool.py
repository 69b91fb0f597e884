"""``SessionPool`` on real DuckDB files: one session per database and dataset, a failed open
remembered, read-only pools never create a file and answer repeated reads from the read cache
while the file is unchanged, writable pools always read the database itself."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import pytest

from dlt_ops import hookimpl
from dlt_ops.adapters.statements import Statement
from dlt_ops.config import ProjectConfig, load_project_config
from dlt_ops.destinations import ResolvedDestination
from dlt_ops.errors import IdentifierError
from dlt_ops.plugins import PluginRegistry
from dlt_ops.project.model import STATE_DIR
from dlt_ops.target.read_cache import CACHE_NAME
from dlt_ops.target.sessions import SessionPool

COUNT = Statement("SELECT count(*) FROM raw.t")


def _project(root: Path, credentials: str = "shared.duckdb") -> ProjectConfig:
    (root / ".dlt").mkdir(parents=True)
    (root / ".dlt" / "config.toml").write_text(
        '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "raw"\n\n'
        f'[destination.duckdb]\ncredentials = "{credentials}"\n'
    )
    return load_project_config(root)


def _database(path: Path, rows: int) -> None:
    """A DuckDB file holding ``raw.t`` with ``rows`` rows, last written a while ago (a file
    written in the last two seconds gets no content stamp)."""
    import duckdb

    con = duckdb.connect(str(path))
    con.execute("CREATE SCHEMA IF NOT EXISTS raw")
    con.execute("CREATE OR REPLACE TABLE raw.t AS SELECT range AS x FROM range(?)", [rows])
    con.close()
    quiet = time.time() - 60
    os.utime(path, (quiet, quiet))


def _where(pipeline: str = "p", dataset: str = "raw") -> ResolvedDestination:
    return ResolvedDestination(engine="duckdb", dataset=dataset, pipeline_name=pipeline)


def _cached_databases(root: Path) -> dict[str, Any]:
    path = root / STATE_DIR / CACHE_NAME
    return json.loads(path.read_text())["databases"] if path.exists() else {}


@pytest.fixture(scope="module")
def registry() -> PluginRegistry:
    return PluginRegistry()


def test_sources_in_one_database_and_dataset_share_one_session(
    tmp_path: Path, registry: PluginRegistry
) -> None:
    config = _project(tmp_path)
    _database(tmp_path / "shared.duckdb", 3)
    with SessionPool(registry, config) as pool:
        first, second = _where("p1"), _where("p2")
        assert pool.key(first) == pool.key(second) == (
            "duckdb", str(tmp_path / "shared.duckdb"), "raw"
        )  # fmt: skip
        assert pool.get(first) is pool.get(second)
        assert pool.get(first).query(COUNT) == [(3,)]
        target = pool.target(first)
        assert pool.target(target) is target  # a Target is taken as it is


def test_a_destination_is_resolved_once_per_pool(
    tmp_path: Path, registry: PluginRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _project(tmp_path)
    with SessionPool(registry, config) as pool:
        before = pool.key(_where())
        monkeypatch.setenv("DESTINATION__DUCKDB__CREDENTIALS", str(tmp_path / "elsewhere.duckdb"))
        assert pool.key(_where()) == before  # the pool keeps what it resolved first
    with SessionPool(registry, config) as pool:
        assert pool.key(_where())[1] == str(tmp_path / "elsewhere.duckdb")


def test_inside_resolving_once_every_pool_takes_the_first_resolution(
    tmp_path: Path, registry: PluginRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fleet reader's several pools (the scheduler's due check, freshness check and alert
    state) resolve each source once inside ``resolving_once``, in the environment as the block
    first read it; outside it, afresh."""
    from dlt_ops.target import resolve_target, resolving_once

    config = _project(tmp_path)
    shared, elsewhere = str(tmp_path / "shared.duckdb"), str(tmp_path / "elsewhere.duckdb")
    with resolving_once():
        with SessionPool(registry, config) as pool:
            assert pool.key(_where())[1] == shared
        assert resolve_target(registry, config, "p1").database == shared
        monkeypatch.setenv("DESTINATION__DUCKDB__CREDENTIALS", elsewhere)
        with SessionPool(registry, config) as pool:
            assert pool.key(_where())[1] == shared  # the pass's first answer holds
            # one not asked yet is resolved now, in the environment as the pass first read it
            assert pool.key(_where("p2"))[1] == shared
        with resolving_once():  # nested: the outer pass's answers still hold
            assert resolve_target(registry, config, "p1").database == shared
    with SessionPool(registry, config) as pool:  # the pass is over: resolved afresh
        assert pool.key(_where())[1] == elsewhere
    assert resolve_target(registry, config, "p1").database == elsewhere


def test_a_source_opens_the_database_its_key_names(
    tmp_path: Path, registry: PluginRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session of a key is the database the key was resolved to: the credentials are not
    looked up again on open (a changed env would put the key's sources on another file)."""
    config = _project(tmp_path)
    _database(tmp_path / "shared.duckdb", 3)
    _database(tmp_path / "elsewhere.duckdb", 5)
    for read_only in (True, False):
        monkeypatch.delenv("DESTINATION__DUCKDB__CREDENTIALS", raising=False)
        with SessionPool(registry, config, read_only=read_only) as pool:
            key = pool.key(_where())
            monkeypatch.setenv(
                "DESTINATION__DUCKDB__CREDENTIALS", str(tmp_path / "elsewhere.duckdb")
            )
            assert pool.get(_where()).query(COUNT) == [(3,)], read_only
            assert pool.key(_where()) == key


def test_a_target_handed_in_opens_the_database_resolved_for_it_in_the_pass(
    tmp_path: Path, registry: PluginRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A :class:`Target` resolved earlier in a ``resolving_once`` block opens with the
    connection found then, in a pool that did not resolve it."""
    from dlt_ops.target import resolve_target, resolving_once

    config = _project(tmp_path)
    _database(tmp_path / "shared.duckdb", 3)
    _database(tmp_path / "elsewhere.duckdb", 5)
    elsewhere = str(tmp_path / "elsewhere.duckdb")
    with resolving_once():
        target = resolve_target(registry, config, "p")
        monkeypatch.setenv("DESTINATION__DUCKDB__CREDENTIALS", elsewhere)
        with SessionPool(registry, config) as pool:
            assert pool.get(target).query(COUNT) == [(3,)]
            assert pool.key(target) == target.key


def test_a_dataset_no_adapter_could_quote_is_refused_and_remembered(
    tmp_path: Path, registry: PluginRegistry
) -> None:
    config = _project(tmp_path)
    with SessionPool(registry, config) as pool:
        with pytest.raises(IdentifierError, match=r"^dataset 'raw; drop' is not a valid") as bad:
            pool.get(_where(dataset="raw; drop"))
        with pytest.raises(IdentifierError) as again:
            pool.get(_where("other", dataset="raw; drop"))
        assert again.value is bad.value  # the next source behind it fails fast, the same way
        longest = "d" * 1024
        assert pool.get(_where(dataset=longest)).fetch_columns("t") is None  # opens
        with pytest.raises(IdentifierError, match="1025 characters long; .* at most 1024"):
            pool.get(_where(dataset=longest + "d"))


def test_a_read_only_pool_never_creates_the_database(
    tmp_path: Path, registry: PluginRegistry
) -> None:
    config = _project(tmp_path)
    with SessionPool(registry, config) as pool:
        session = pool.get(_where())
        assert session.fetch_columns("t") is None  # an absent database reads as empty
    assert not (tmp_path / "shared.duckdb").exists()


def test_repeated_reads_of_an_unchanged_file_come_from_the_cache_until_it_changes(
    tmp_path: Path, registry: PluginRegistry
) -> None:
    config = _project(tmp_path)
    db = tmp_path / "shared.duckdb"
    _database(db, 3)
    with SessionPool(registry, config) as pool:
        assert pool.get(_where()).query(COUNT) == [(3,)]
    cached = _cached_databases(tmp_path)
    assert len(cached) == 1
    (entry,) = cached.values()
    assert [json.loads(entry["answers"][i]) for i in entry["reads"].values()] == [[[3]]]  # texts
    stamp = entry["stamp"]
    assert stamp not in ("", "None") and str(db) not in json.dumps(cached)
    with SessionPool(registry, config) as pool:  # the next command: same file, same answer
        assert pool.get(_where()).query(COUNT) == [(3,)]
    assert _cached_databases(tmp_path)[next(iter(cached))]["stamp"] == stamp
    _database(db, 5)  # written again: a new stamp, so the database is read again
    with SessionPool(registry, config) as pool:
        assert pool.get(_where()).query(COUNT) == [(5,)]
    assert _cached_databases(tmp_path)[next(iter(cached))]["stamp"] != stamp


def test_inside_resolving_once_a_database_is_stamped_once(
    tmp_path: Path, registry: PluginRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scheduler's due check, freshness check and alert state each take a pool: inside
    ``resolving_once`` a database's content stamp is taken by the first, outside it by each."""
    from dlt_ops.target import resolving_once
    from dltops_duckdb.adapter import DuckDBAdapter

    config = _project(tmp_path)
    _database(tmp_path / "shared.duckdb", 3)
    stamped: list[str] = []
    real = DuckDBAdapter.content_stamp

    def counted(self: DuckDBAdapter, target: Any) -> str | None:
        stamped.append(target.dataset)
        return real(self, target)

    monkeypatch.setattr(DuckDBAdapter, "content_stamp", counted)
    with resolving_once():
        for _ in range(3):
            with SessionPool(registry, config) as pool:
                assert pool.get(_where()).query(COUNT) == [(3,)]
                assert pool.get(_where(dataset="other")).fetch_columns("t") is None
    assert sorted(stamped) == ["other", "raw"]  # one per database and dataset
    with SessionPool(registry, config) as pool:  # the block is over: stamped afresh
        assert pool.get(_where()).query(COUNT) == [(3,)]
    assert len(stamped) == 3


def test_each_database_has_its_own_cache_entry(tmp_path: Path, registry: PluginRegistry) -> None:
    config = _project(tmp_path, credentials="")  # dlt's default: <pipeline_name>.duckdb
    _database(tmp_path / "a.duckdb", 1)
    _database(tmp_path / "b.duckdb", 2)
    with SessionPool(registry, config) as pool:
        assert pool.get(_where("a")).query(COUNT) == [(1,)]
        assert pool.get(_where("b")).query(COUNT) == [(2,)]
    assert len(_cached_databases(tmp_path)) == 2
    with SessionPool(registry, config) as pool:  # both answered again, neither confused
        assert pool.get(_where("b")).query(COUNT) == [(2,)]
        assert pool.get(_where("a")).query(COUNT) == [(1,)]


def test_pools_open_at_once_keep_each_others_answers(
    tmp_path: Path, registry: PluginRegistry
) -> None:
    """Two pools of one command over one project (each saves on close): the file ends up
    with both pools' reads, the second save does not drop the first one's."""
    config = _project(tmp_path, credentials="")  # dlt's default: <pipeline_name>.duckdb
    _database(tmp_path / "a.duckdb", 1)
    _database(tmp_path / "b.duckdb", 2)
    with SessionPool(registry, config) as outer:
        assert outer.get(_where("a")).query(COUNT) == [(1,)]
        with SessionPool(registry, config) as inner:
            assert inner.get(_where("b")).query(COUNT) == [(2,)]
        assert len(_cached_databases(tmp_path)) == 2
    assert len(_cached_databases(tmp_path)) == 2


def test_a_recently_written_file_is_read_but_not_cached(
    tmp_path: Path, registry: PluginRegistry
) -> None:
    config = _project(tmp_path)
    db = tmp_path / "shared.duckdb"
    _database(db, 2)
    os.utime(db)  # just written: a later write could keep its size and mtime
    with SessionPool(registry, config) as pool:
        assert pool.get(_where()).query(COUNT) == [(2,)]
    assert _cached_databases(tmp_path) == {}


def test_a_writable_pool_reads_its_own_writes(tmp_path: Path, registry: PluginRegistry) -> None:
    config = _project(tmp_path)
    _database(tmp_path / "shared.duckdb", 1)
    with SessionPool(registry, config, read_only=False) as pool:
        session = pool.get(_where())
        assert session.query(COUNT) == [(1,)]
        session.execute(Statement("INSERT INTO raw.t VALUES (7)"))
        assert session.query(COUNT) == [(2,)]
    assert not (tmp_path / STATE_DIR / CACHE_NAME).exists()


def test_the_adapters_destination_settings_reach_its_connection(tmp_path: Path) -> None:
    from dltops_duckdb.adapter import DuckDBAdapter

    seen: list[dict[str, object]] = []

    class LocatedDuckDB(DuckDBAdapter):
        """DuckDB that, like a warehouse, needs a destination setting to connect."""

        dlt_setting_keys: ClassVar[tuple[str, ...]] = ("location",)

        def connect(self, target: Any) -> Any:
            seen.append(dict(target.options))
            return super().connect(target)

    @hookimpl
    def dlt_ops_register_destinations(register) -> None:  # noqa: ANN001
        register(LocatedDuckDB, name="duckdb")

    plugin = ModuleType("tests_located_duckdb")
    plugin.dlt_ops_register_destinations = dlt_ops_register_destinations  # type: ignore[attr-defined]
    registry = PluginRegistry(entry_points=[])
    registry.add_plugin(plugin, name="located_duckdb", kind="destination")
    config = _project(tmp_path)
    with (tmp_path / ".dlt" / "config.toml").open("a") as out:
        out.write('location = "EU"\n')
    _database(tmp_path / "shared.duckdb", 1)
    with SessionPool(registry, config, read_only=False) as pool:
        assert pool.get(_where()).query(COUNT) == [(1,)]
    assert seen == [{"location": "EU"}]
    (tmp_path / "shared.duckdb").unlink()
    with SessionPool(registry, config) as pool:  # a reader with settings: still a reader
        assert pool.get(_where()).fetch_columns("t") is None
    assert not (tmp_path / "shared.duckdb").exists()
