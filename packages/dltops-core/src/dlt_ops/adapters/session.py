"""``DestinationSession``: one adapter + one live connection + one dataset, for a whole command."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from dlt_ops.adapters.model import ColumnInfo, ConnectionTarget, TableSpec
from dlt_ops.adapters.protocol import DestinationAdapter, SqlClient
from dlt_ops.adapters.statements import Statement
from dlt_ops.log import get_logger

log = get_logger(__name__)

_V = TypeVar("_V")


class DestinationSession:
    """Core code's handle on a destination: statements in, rows and row counts out.

    Opens the connection once and reuses it; remembers which tables it already ensured so the
    idempotent DDL runs once per session, not once per write.
    """

    def __init__(self, adapter: DestinationAdapter, client: SqlClient, dataset: str) -> None:
        self.adapter = adapter
        self.client = client
        self.dataset = dataset
        self._ensured: set[str] = set()
        self._dataset_ready = False
        # A run's heartbeat thread shares the connection; drivers are not all thread-safe.
        self._lock = threading.RLock()

    @classmethod
    def open(cls, adapter: DestinationAdapter, target: ConnectionTarget) -> DestinationSession:
        """Connect ``adapter`` to ``target``."""
        return cls(adapter, adapter.connect(target), target.dataset)

    def execute(self, stmt: Statement, *params: Any) -> int:
        """Rows affected by ``stmt``."""
        with self._lock:
            return self.adapter.execute(self.client, self.dataset, stmt, params)

    def insert_rows(self, spec: TableSpec, rows: Sequence[Sequence[Any]]) -> int:
        """Insert ``rows`` into ``spec``'s table in one statement (the adapter's bulk form)."""
        with self._lock:
            return self.adapter.insert_rows(self.client, self.dataset, spec, rows)

    def query(self, stmt: Statement, *params: Any) -> list[tuple[Any, ...]]:
        """All rows of ``stmt``."""
        with self._lock:
            return self.adapter.query(self.client, self.dataset, stmt, params)

    def ensure_dataset(self) -> None:
        """Create the dataset once per session (where the engine allows it)."""
        with self._lock:
            if not self._dataset_ready:
                self.adapter.ensure_dataset(self.client, self.dataset)
                self._dataset_ready = True

    def ensure_table(self, spec: TableSpec) -> None:
        """Create ``spec`` (and the dataset) once per session; an ``evolving`` spec's existing
        table gains the columns it lacks."""
        with self._lock:
            if spec.name not in self._ensured:
                self.ensure_dataset()
                if spec.evolving:
                    added = self.adapter.evolve_table(self.client, self.dataset, spec)
                    if added:
                        log.info("table.columns_added", table=spec.name, columns=added)
                else:
                    self.adapter.create_table(self.client, self.dataset, spec)
                self._ensured.add(spec.name)

    def fetch_columns(self, table: str) -> list[ColumnInfo] | None:
        """Columns of ``table``, ``None`` when absent."""
        with self._lock:
            return self.adapter.fetch_columns(self.client, self.dataset, table)

    def remember(self, key: Hashable, build: Callable[[], _V]) -> _V:
        """A value derived from this session's reads (``key`` names it): built on each call
        here; a read-only session that answers from the read cache keeps it while the database
        is unchanged, so a command asking twice builds it once (callers copy, never change it).
        """
        return build()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Atomic block (engines with ``capabilities.transactions``)."""
        with self._lock, self.adapter.transaction(self.client):
            yield

    def close(self) -> None:
        """Close the connection."""
        self.adapter.close(self.client)

    def __enter__(self) -> DestinationSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
