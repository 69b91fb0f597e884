"""Ledger reads answered again from the last identical read while the database is unchanged.

``status``, ``runs list`` and the scheduler re-read ledgers that mostly did not change since
the last time they looked. For an embedded database file, opening it costs more than the rest
of the command (the driver's import, a database instance, per file when there are many). An
adapter that can fingerprint what a read would see, ``content_stamp(target)`` (optional; see
docs/adapter-contract.md), lets a read-only session answer a query it answered before under the
same stamp from ``.dlt-ops/ledger-reads.json``, and connect only on a miss.

Correctness rests on the stamp: any write changes it, and an adapter returns none while it
cannot be sure (a file engine: while a write could still land in the same timestamp tick).
The stamp is taken before the read, so a write racing the read only costs a miss later. The
file holds JSON data, never code, and no credentials: databases are keyed by a hash of the
session key.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Hashable, Sequence
from datetime import date, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from dlt_ops.adapters import ColumnInfo, ConnectionTarget, DestinationAdapter, DestinationSession
from dlt_ops.adapters.protocol import SqlClient
from dlt_ops.adapters.statements import Statement
from dlt_ops.atomic_file import write_atomically
from dlt_ops.log import get_logger

log = get_logger(__name__)

_V = TypeVar("_V")
_NOT_DECODED = object()

CACHE_NAME = "ledger-reads.json"
#: 2: each answer a JSON text of its own, reads named by a hash; 3: per database, each distinct
#: answer written once and its reads pointing at it (status, the due check and the freshness
#: check read the same rows under different statements: a fleet's file was 40 % repeats)
_FORMAT = 3
#: per database, the reads kept (status, runs list, due checks: a handful of shapes)
MAX_READS = 64
#: databases kept; the least recently stamped go first
MAX_DATABASES = 2000
#: answer texts kept decoded in a process (a command asks for a few per database)
MAX_DECODED = 20_000


class _Uncacheable(Exception):
    """A value the JSON codec does not round-trip exactly."""


def _encode(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime):
        return {"dt": value.isoformat()}
    if isinstance(value, date):
        return {"d": value.isoformat()}
    if isinstance(value, list | tuple):
        return [_encode(v) for v in value]
    raise _Uncacheable(type(value).__name__)


def _decode_marker(value: dict[str, str]) -> date:
    """The date or datetime :func:`_encode` wrote as ``{"dt": ...}`` / ``{"d": ...}`` (the only
    objects an answer holds: ``json.loads`` calls this for each, and builds the rest in C)."""
    if "dt" in value:
        return datetime.fromisoformat(value["dt"])
    return date.fromisoformat(value["d"])


def _decode(text: str) -> Any:
    return json.loads(text, object_hook=_decode_marker)


@lru_cache(maxsize=4096)  # a fleet's databases ask the same few reads: hashed once each
def _slot(read: str) -> str:
    """The name a read is kept under (the statement texts are long and repeat per database)."""
    return hashlib.sha256(read.encode()).hexdigest()[:32]


@lru_cache(maxsize=4096)  # a pure function, asked once per database per pool
def database_key(session_key: Hashable) -> str:
    """A stable name for one database+dataset+credentials that does not reveal them."""
    return hashlib.sha256(repr(session_key).encode()).hexdigest()[:32]


class ReadCache:
    """The cache file of one project: loaded on first use, written back by :meth:`save`.

    :meth:`shared` hands every session pool of a process the same instance, so a command
    that reads the ledgers in several passes (the scheduler's due check, its freshness check
    and its alert state; ``report``) parses the file once.
    """

    _shared: ClassVar[dict[Path, ReadCache]] = {}
    _shared_lock: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def shared(cls, path: Path) -> ReadCache:
        """This process's cache of ``path`` (answers stay tied to their stamps, so one kept
        across commands of a long-lived process is as safe as a fresh one)."""
        with cls._shared_lock:
            found = cls._shared.get(path)
            if found is None:
                found = cls._shared[path] = cls(path)
            return found

    def __init__(self, path: Path) -> None:
        self.path = path
        self._databases: dict[str, dict[str, Any]] | None = None
        #: per database, the stamp and what was decoded or derived under it in this process (a
        #: command reading a ledger in several passes decodes and builds its rows once)
        self._memo: dict[str, tuple[str, dict[Hashable, Any]]] = {}
        #: answer text -> what it decodes to (shared: callers copy, never change it)
        self._decoded: dict[str, Any] = {}
        #: id of a decoded value -> (the value, what derived() built from it)
        self._derived: dict[int, tuple[Any, Any]] = {}
        self._dirty = False
        self._lock = threading.Lock()

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._databases is None:
            try:
                doc = json.loads(self.path.read_bytes())
                ok = isinstance(doc, dict) and doc.get("format") == _FORMAT
                found = doc.get("databases") if ok else None
                self._databases = found if isinstance(found, dict) else {}
            except (OSError, ValueError, RecursionError):
                self._databases = {}  # none yet, or not ours: start over
        return self._databases

    def load(self) -> None:
        """Parse the file now (else on the first read)."""
        with self._lock:
            self._load()

    def get(self, database: str, stamp: str, read: str) -> tuple[bool, Any]:
        """``(True, value)`` when ``read`` was answered under ``stamp``, else ``(False, None)``
        (the value is shared within the process: callers copy, never change it)."""
        memo = self._memo_of(database, stamp)
        if read in memo:
            return True, memo[read]
        with self._lock:
            entry = self._load().get(database)
            if not isinstance(entry, dict) or entry.get("stamp") != stamp:
                return False, None
            found = _answer_of(entry, _slot(read))
            if found is None:
                return False, None
        # reads that share an answer share what it decodes to, across databases too (every
        # ledger of a fleet answers the column listing of its runs table alike)
        value = self._decoded.get(found, _NOT_DECODED)
        if value is _NOT_DECODED:
            try:
                value = _decode(found)
            except (ValueError, KeyError, TypeError, RecursionError):
                return False, None  # not what this version wrote: a miss
            self._keep(self._decoded, found, value)
        memo[read] = value
        return True, value

    def derived(self, value: Any, build: Callable[[Any], _V]) -> _V:
        """``build(value)`` for a value :meth:`get` returned, made once per process however
        many databases share that answer (shared: callers copy, never change it)."""
        found = self._derived.get(id(value))
        if found is None or found[0] is not value:  # the value is kept: its id stays its own
            found = (value, build(value))
            self._keep(self._derived, id(value), found)
        return found[1]

    def _keep(self, store: dict[Any, Any], key: Any, value: Any) -> None:
        """``store[key] = value``, ``store`` emptied first when full (a long-lived scheduler
        reads new answers every pass: start over rather than grow)."""
        with self._lock:
            if len(store) >= MAX_DECODED:
                store.clear()
            store[key] = value

    def remembered(self, database: str, stamp: str, key: Hashable, build: Callable[[], _V]) -> _V:
        """``build()``, kept in this process while ``database`` keeps ``stamp`` (shared:
        callers copy, never change it)."""
        memo = self._memo_of(database, stamp)
        if key not in memo:
            memo[key] = build()
        return memo[key]

    def _memo_of(self, database: str, stamp: str) -> dict[Hashable, Any]:
        with self._lock:
            found = self._memo.get(database)
            if found is None or found[0] != stamp:  # a new stamp: what was kept is stale
                found = self._memo[database] = (stamp, {})
            return found[1]

    def put(self, database: str, stamp: str, read: str, value: Any) -> None:
        """Remember ``value`` as the answer to ``read`` under ``stamp`` (a new stamp drops the
        database's older answers)."""
        self._memo_of(database, stamp)  # a new stamp drops what was kept under the old one
        try:
            encoded = json.dumps(_encode(value), separators=(",", ":"))
        except _Uncacheable:
            return
        with self._lock:
            databases = self._load()
            entry = databases.get(database)
            if (
                not isinstance(entry, dict)
                or entry.get("stamp") != stamp
                or not isinstance(entry.get("reads"), dict)  # not what this version wrote
            ):
                entry = databases[database] = {"stamp": stamp, "reads": {}}
            reads = entry["reads"]
            if len(reads) >= MAX_READS:
                reads.pop(next(iter(reads)))
            reads[_slot(read)] = encoded
            databases[database] = databases.pop(database)  # most recent last
            while len(databases) > MAX_DATABASES:
                databases.pop(next(iter(databases)))
            self._dirty = True

    def save(self) -> None:
        """Write the file atomically when anything changed (best effort: a read-only project
        directory just means no cache)."""
        with self._lock:
            if not self._dirty or self._databases is None:
                return
            for entry in self._databases.values():
                if isinstance(entry, dict):
                    _share_answers(entry)
            doc = {"format": _FORMAT, "databases": self._databases}
            try:
                write_atomically(self.path, json.dumps(doc, separators=(",", ":")))
                self._dirty = False
            except OSError as exc:
                log.debug("ledger.read_cache_not_saved", path=str(self.path), error=str(exc))


def _answer_of(entry: dict[str, Any], slot: str) -> str | None:
    """The answer text ``entry`` keeps for ``slot``: its own (put in this process) or the
    shared one it points at (as read from the file)."""
    reads = entry.get("reads")
    found = reads.get(slot) if isinstance(reads, dict) else None
    if isinstance(found, int) and not isinstance(found, bool):
        answers = entry.get("answers")
        if isinstance(answers, list) and 0 <= found < len(answers):
            found = answers[found]
    return found if isinstance(found, str) else None


def _share_answers(entry: dict[str, Any]) -> None:
    """``entry`` as written: each distinct answer once, in ``answers``, and each read the
    index of its answer (what does not decode as an answer is dropped)."""
    index: dict[str, int] = {}
    reads = {}
    for slot in list(entry.get("reads") or ()):
        text = _answer_of(entry, slot)
        if text is not None:
            reads[slot] = index.setdefault(text, len(index))
    entry["reads"], entry["answers"] = reads, list(index)


def _read_key(kind: str, text: str, params: Sequence[Any]) -> str | None:
    try:
        return json.dumps([kind, text, _encode(list(params))], separators=(",", ":"))
    except _Uncacheable:
        return None


class SnapshotSession(DestinationSession):
    """A read-only session that answers repeated reads from :class:`ReadCache` and connects
    (through ``connect``) only on the first miss or the first non-read call."""

    def __init__(
        self,
        adapter: DestinationAdapter,
        target: ConnectionTarget,
        connect: Callable[[], SqlClient],
        cache: ReadCache,
        database: str,
        stamp: str,
    ) -> None:
        self._connect = connect
        self._client: SqlClient | BaseException | None = None
        super().__init__(adapter, None, target.dataset)  # type: ignore[arg-type]
        self._cache, self._database, self._stamp = cache, database, stamp

    @property
    def client(self) -> SqlClient:
        """The connection, opened on first use; a failed open is raised again on each use."""
        found = self._client
        if found is None:
            try:
                found = self._client = self._connect()
            except BaseException as exc:
                self._client = exc
                raise
        if isinstance(found, BaseException):
            raise found
        return found

    @client.setter
    def client(self, value: SqlClient | None) -> None:
        if value is not None:
            self._client = value

    def _cached(self, key: str | None, read: Callable[[], Any]) -> Any:
        if key is not None:
            hit, value = self._cache.get(self._database, self._stamp, key)
            if hit:
                return value
        value = read()
        if key is not None:
            self._cache.put(self._database, self._stamp, key, value)
        return value

    def query(self, stmt: Statement, *params: Any) -> list[tuple[Any, ...]]:
        rows = self._cached(_read_key("query", stmt.text, params), lambda: super(
            SnapshotSession, self).query(stmt, *params))  # fmt: skip
        return [tuple(row) for row in rows]

    def fetch_columns(self, table: str) -> list[ColumnInfo] | None:
        def read() -> list[list[str]] | None:
            found = super(SnapshotSession, self).fetch_columns(table)
            return None if found is None else [[c.name, c.data_type] for c in found]

        columns = self._cached(_read_key("columns", table, ()), read)
        if columns is None:
            return None
        # a fleet's ledgers list their runs table alike: the records are built once
        built = self._cache.derived(columns, lambda found: [ColumnInfo(n, t) for n, t in found])
        return list(built)

    def remember(self, key: Hashable, build: Callable[[], _V]) -> _V:
        return self._cache.remembered(self._database, self._stamp, key, build)

    def close(self) -> None:
        if self._client is not None and not isinstance(self._client, BaseException):
            self.adapter.close(self._client)
