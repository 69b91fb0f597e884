"""The destination-adapter conformance kit.

Subclass :class:`DestinationAdapterSuite` in your package's tests::

    class TestMyAdapter(DestinationAdapterSuite):
        __test__ = True

        @pytest.fixture
        def adapter(self):
            return MyAdapter()

        @pytest.fixture
        def target(self, dataset, tmp_path):
            return ConnectionTarget("mydb", dataset, tmp_path, credentials=creds)

``target`` says where the kit connects; the default ``connection`` fixture opens one client on
it (override ``connection`` to add cleanup), and some tests open a second one. ``dataset`` is a
fresh, unique dataset name per test (override it if your engine needs a different naming
scheme); ``absent_target`` is a read-only target on a database that does not exist (the default
moves ``target`` to an empty project root: override it when your database is not found
relative to the project root). Tests skip only by the adapter's declared ``capabilities``.

The threading contract the kit checks: a client opened in one thread is used from another
(a run's heartbeat thread writes through the command's connection; calls are serialized, never
concurrent), two clients on one database write at the same time, and two transactions on two
clients, each reading before either writes, both commit (SQLite-like engines must take the
write lock at ``BEGIN``) with one winner for a compare-and-swap inside them.
"""

from __future__ import annotations

import abc
import dataclasses
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from dlt_ops.adapters import (
    Column,
    ColumnType,
    ConnectionTarget,
    DestinationAdapter,
    Statement,
    TableSpec,
)
from dlt_ops.errors import DestinationError, IdentifierError, StatementError

HOSTILE_VALUES = (
    "x'); DROP TABLE decoy; --",
    "'; DELETE FROM decoy WHERE '1'='1",
    'a"b',
    "?",
    "%s",
    "%(x)s",
    "$1",
    "@p0",
    "back\\slash",
    "semi;colon",
    "`tick`",
    "new\nline",
)
HOSTILE_IDENTIFIERS = (
    'a"b',
    "a;b",
    "t; DROP TABLE decoy; --",
    "naïve",
    "x" * 1024,
    "",
    "1abc",
    "a b",
    "a`b",
    "a.b",
    "{t}",
)

PROBE = TableSpec(
    "kit_probe",
    (
        Column("id", ColumnType.BIGINT, nullable=False),
        Column("txt", ColumnType.TEXT),
        Column("num", ColumnType.DOUBLE),
        Column("flag", ColumnType.BOOLEAN),
        Column("ts", ColumnType.TIMESTAMPTZ),
    ),
    indexes=(("txt", "ts"),),
)
DECOY = TableSpec("decoy", (Column("id", ColumnType.BIGINT),))
INSERT = Statement("INSERT INTO {kit_probe} (id, txt, num, flag, ts) VALUES (?, ?, ?, ?, ?)")
SELECT_BY_ID = Statement("SELECT id, txt, num, flag, ts FROM {kit_probe} WHERE id = ?")
COUNT = Statement("SELECT COUNT(*) FROM {kit_probe}")


class DestinationAdapterSuite(abc.ABC):
    """The adapter contract as tests. Subclass, set ``__test__ = True``, provide fixtures."""

    __test__ = False

    @abc.abstractmethod
    @pytest.fixture
    def adapter(self) -> DestinationAdapter:
        """The adapter under test."""

    @abc.abstractmethod
    @pytest.fixture
    def target(self, dataset: str, tmp_path: Any) -> ConnectionTarget:
        """Where the kit connects: a database in which ``dataset`` does not exist yet."""

    @pytest.fixture
    def connection(self, adapter: DestinationAdapter, target: ConnectionTarget) -> Iterator[Any]:
        """A live client on ``target``; closed afterwards."""
        client = adapter.connect(target)
        yield client
        adapter.close(client)

    @pytest.fixture
    def absent_target(self, target: ConnectionTarget, tmp_path: Any) -> ConnectionTarget:
        """A read-only target on a database (or dataset) that does not exist."""
        root = tmp_path / "kit_absent_root"
        root.mkdir()
        return dataclasses.replace(
            target, project_root=root, dataset=target.dataset + "_ro", read_only=True
        )

    @pytest.fixture
    def registry(self) -> Any:
        """The plugin registry the adapter is registered in (installed entry points)."""
        from dlt_ops.plugins import PluginRegistry

        return PluginRegistry()

    @pytest.fixture
    def dataset(self) -> str:
        """A unique, not-yet-existing dataset name."""
        return f"kit_{uuid.uuid4().hex[:12]}"

    @pytest.fixture
    def probe(self, adapter: DestinationAdapter, connection: Any, dataset: str) -> Any:
        """The dataset with the probe table created; yields the client."""
        adapter.ensure_dataset(connection, dataset)
        adapter.create_table(connection, dataset, PROBE)
        return connection

    # -- helpers ---------------------------------------------------------------------------

    @staticmethod
    def _insert(adapter: DestinationAdapter, client: Any, dataset: str, *rows: tuple) -> None:
        for row in rows:
            adapter.execute(client, dataset, INSERT, row)

    @staticmethod
    def _row(adapter: DestinationAdapter, client: Any, dataset: str, row_id: int) -> tuple:
        rows = adapter.query(client, dataset, SELECT_BY_ID, (row_id,))
        assert len(rows) == 1, f"expected one row with id={row_id}, got {rows}"
        return rows[0]

    # -- the protocol --------------------------------------------------------------------------

    def test_adapter_satisfies_protocol(self, adapter: DestinationAdapter) -> None:
        from dlt_ops.destinations import adapter_problems

        assert adapter_problems(adapter) == []
        assert isinstance(adapter, DestinationAdapter)

    def test_capabilities_are_frozen(self, adapter: DestinationAdapter) -> None:
        with pytest.raises(dataclasses.FrozenInstanceError):
            adapter.capabilities.rowcount = not adapter.capabilities.rowcount  # type: ignore[misc]

    def test_entry_point_registers_this_adapter(
        self, adapter: DestinationAdapter, registry: Any
    ) -> None:
        from dlt_ops.destinations import load_adapter

        loaded = load_adapter(registry, adapter.name)
        assert type(loaded) is type(adapter)

    # -- identifiers ---------------------------------------------------------------------------

    @pytest.mark.parametrize("ident", HOSTILE_IDENTIFIERS, ids=lambda s: repr(s[:20]))
    def test_hostile_identifier_rejected(self, adapter: DestinationAdapter, ident: str) -> None:
        with pytest.raises(IdentifierError):
            adapter.quote_identifier(ident)
        with pytest.raises(IdentifierError):
            adapter.table_ref("ok_dataset", ident)
        with pytest.raises(IdentifierError):
            adapter.table_ref(ident, "ok_table")

    def test_reserved_word_columns_round_trip(
        self, adapter: DestinationAdapter, connection: Any, dataset: str
    ) -> None:
        spec = TableSpec(
            "kit_reserved",
            (Column("select", ColumnType.TEXT), Column("order", ColumnType.BIGINT)),
        )
        adapter.ensure_dataset(connection, dataset)
        adapter.create_table(connection, dataset, spec)
        adapter.execute(
            connection,
            dataset,
            Statement('INSERT INTO {kit_reserved} ("select", "order") VALUES (?, ?)'),
            ("x", 7),
        )
        rows = adapter.query(
            connection,
            dataset,
            Statement('SELECT "select", "order" FROM {kit_reserved} WHERE "order" = ?'),
            (7,),
        )
        assert rows == [("x", 7)]
        names = [c.name for c in adapter.fetch_columns(connection, dataset, "kit_reserved") or []]
        assert names == ["select", "order"]

    # -- values are always data ----------------------------------------------------------------

    def test_injection_probe_values_stay_data(
        self, adapter: DestinationAdapter, probe: Any, dataset: str
    ) -> None:
        adapter.create_table(probe, dataset, DECOY)
        adapter.execute(probe, dataset, Statement("INSERT INTO {decoy} (id) VALUES (?)"), (1,))
        for i, value in enumerate(HOSTILE_VALUES):
            self._insert(adapter, probe, dataset, (i, value, None, None, None))
        for i, value in enumerate(HOSTILE_VALUES):
            assert self._row(adapter, probe, dataset, i)[1] == value
        found = adapter.query(
            probe,
            dataset,
            Statement("SELECT id FROM {kit_probe} WHERE txt = ?"),
            (HOSTILE_VALUES[0],),
        )
        assert found == [(0,)]
        assert adapter.fetch_columns(probe, dataset, "decoy") is not None, "decoy table dropped"
        assert adapter.query(probe, dataset, Statement("SELECT COUNT(*) FROM {decoy}")) == [(1,)]

    def test_literals_keep_question_marks_and_percents(
        self, adapter: DestinationAdapter, probe: Any, dataset: str
    ) -> None:
        self._insert(adapter, probe, dataset, (1, "a?b%c", None, None, None))
        rows = adapter.query(
            probe,
            dataset,
            Statement("SELECT id FROM {kit_probe} WHERE txt = 'a?b%c' AND id = ?"),
            (1,),
        )
        assert rows == [(1,)]

    def test_parameter_count_mismatch_raises_before_execution(
        self, adapter: DestinationAdapter, probe: Any, dataset: str
    ) -> None:
        with pytest.raises(StatementError):
            adapter.execute(probe, dataset, INSERT, (1, "too few"))
        assert adapter.query(probe, dataset, COUNT) == [(0,)]

    # -- rows affected -------------------------------------------------------------------------

    def test_rows_affected_compare_and_swap(
        self, adapter: DestinationAdapter, probe: Any, dataset: str
    ) -> None:
        if not adapter.capabilities.rowcount:
            pytest.skip("adapter declares rowcount=False")
        self._insert(adapter, probe, dataset, (1, "pending", None, None, None))
        claim = Statement("UPDATE {kit_probe} SET txt = ? WHERE id = ? AND txt = ?")
        assert adapter.execute(probe, dataset, claim, ("claimed", 1, "pending")) == 1
        assert adapter.execute(probe, dataset, claim, ("claimed", 1, "pending")) == 0
        assert self._row(adapter, probe, dataset, 1)[1] == "claimed"

    def test_run_lease_statements(
        self, adapter: DestinationAdapter, connection: Any, dataset: str
    ) -> None:
        """The run lease's canonical statements (``dlt_ops.runner.lease``): one holder at a
        time, shared holders join and leave, an expired lease is taken over."""
        if not adapter.capabilities.rowcount:
            pytest.skip("adapter declares rowcount=False")
        from datetime import timedelta

        from dlt_ops.adapters import DestinationSession
        from dlt_ops.runner.lease import TableLease

        session = DestinationSession(adapter, connection, dataset)
        term = timedelta(minutes=5)

        def lease(token: str, run_id: str, ttl: timedelta = term) -> TableLease:
            made = TableLease(session, "src", token, ttl, run_id)
            made._prepare()
            return made

        first, second = lease("h:1:a", "run-a"), lease("h:2:b", "run-b")
        assert first.try_acquire() is None
        holder = second.try_acquire()
        assert holder is not None and holder.run_id == "run-a"
        assert first.renew()
        first.release()
        assert second.try_acquire() is None
        second.release()
        one, two = lease("backfill:x", "chunk-1"), lease("backfill:x", "chunk-2")
        assert one.try_acquire() is None and two.try_acquire() is None
        plain = lease("h:3:c", "run-c")
        one.release()
        assert plain.try_acquire() is not None  # a member is still in
        two.release()
        assert plain.try_acquire() is None
        plain.release()
        stale = lease("h:4:d", "run-d", timedelta(seconds=-1))
        assert stale.try_acquire() is None
        late = lease("h:5:e", "run-e")
        assert late.try_acquire() is None  # the expired holder lost it
        assert not stale.renew()

    def test_rows_affected_insert_and_delete(
        self, adapter: DestinationAdapter, probe: Any, dataset: str
    ) -> None:
        if not adapter.capabilities.rowcount:
            pytest.skip("adapter declares rowcount=False")
        assert adapter.execute(probe, dataset, INSERT, (1, "a", None, None, None)) == 1
        self._insert(
            adapter, probe, dataset, (2, "a", None, None, None), (3, "b", None, None, None)
        )
        delete = Statement("DELETE FROM {kit_probe} WHERE txt = ?")
        assert adapter.execute(probe, dataset, delete, ("a",)) == 2
        assert adapter.execute(probe, dataset, delete, ("a",)) == 0

    # -- DDL -----------------------------------------------------------------------------------

    def test_ddl_is_idempotent(
        self, adapter: DestinationAdapter, connection: Any, dataset: str
    ) -> None:
        adapter.ensure_dataset(connection, dataset)
        adapter.ensure_dataset(connection, dataset)
        adapter.create_table(connection, dataset, PROBE)
        self._insert(adapter, connection, dataset, (1, "kept", None, None, None))
        adapter.create_table(connection, dataset, PROBE)
        assert adapter.query(connection, dataset, COUNT) == [(1,)], "re-create lost rows"
        adapter.drop_table(connection, dataset, PROBE.name)
        adapter.drop_table(connection, dataset, PROBE.name)
        assert adapter.fetch_columns(connection, dataset, PROBE.name) is None

    def test_evolving_table_gains_missing_columns_and_keeps_rows(
        self, adapter: DestinationAdapter, probe: Any, dataset: str
    ) -> None:
        grown = dataclasses.replace(
            PROBE,
            columns=(*PROBE.columns, Column("added_txt", ColumnType.TEXT)),
            evolving=True,
        )
        self._insert(adapter, probe, dataset, (1, "old row", None, None, None))
        assert adapter.evolve_table(probe, dataset, grown) == ["added_txt"]
        assert adapter.evolve_table(probe, dataset, grown) == [], "added twice"
        columns = adapter.fetch_columns(probe, dataset, PROBE.name) or []
        assert [c.name for c in columns] == [c.name for c in grown.columns]
        adapter.execute(
            probe, dataset, Statement("UPDATE {kit_probe} SET added_txt = ? WHERE id = ?"),
            ("new value", 1),
        )  # fmt: skip
        read = Statement("SELECT txt, added_txt FROM {kit_probe} WHERE id = ?")
        assert adapter.query(probe, dataset, read, (1,)) == [("old row", "new value")]

    def test_evolving_table_is_created_when_absent(
        self, adapter: DestinationAdapter, connection: Any, dataset: str
    ) -> None:
        adapter.ensure_dataset(connection, dataset)
        spec = dataclasses.replace(PROBE, evolving=True)
        assert adapter.evolve_table(connection, dataset, spec) == []
        columns = adapter.fetch_columns(connection, dataset, PROBE.name) or []
        assert [c.name for c in columns] == [c.name for c in PROBE.columns]

    def test_fetch_columns_absent_table_is_none(
        self, adapter: DestinationAdapter, connection: Any, dataset: str
    ) -> None:
        adapter.ensure_dataset(connection, dataset)
        assert adapter.fetch_columns(connection, dataset, "no_such_table") is None

    def test_fetch_columns_absent_dataset_is_none(
        self, adapter: DestinationAdapter, connection: Any, dataset: str
    ) -> None:
        assert adapter.fetch_columns(connection, dataset + "_absent", "kit_probe") is None

    def test_fetch_columns_in_declared_order(
        self, adapter: DestinationAdapter, probe: Any, dataset: str
    ) -> None:
        columns = adapter.fetch_columns(probe, dataset, PROBE.name)
        assert [c.name for c in columns or []] == [c.name for c in PROBE.columns]
        assert all(c.data_type for c in columns or [])

    def test_not_null_is_enforced(
        self, adapter: DestinationAdapter, probe: Any, dataset: str
    ) -> None:
        with pytest.raises(DestinationError):
            self._insert(adapter, probe, dataset, (None, "no id", None, None, None))

    def test_unique_constraint_is_enforced(
        self, adapter: DestinationAdapter, connection: Any, dataset: str
    ) -> None:
        if not adapter.capabilities.unique_constraints:
            pytest.skip("adapter declares unique_constraints=False")
        spec = TableSpec(
            "kit_unique",
            (Column("a", ColumnType.TEXT), Column("b", ColumnType.TEXT)),
            unique=("a", "b"),
        )
        adapter.ensure_dataset(connection, dataset)
        adapter.create_table(connection, dataset, spec)
        insert = Statement("INSERT INTO {kit_unique} (a, b) VALUES (?, ?)")
        adapter.execute(connection, dataset, insert, ("x", "1"))
        adapter.execute(connection, dataset, insert, ("x", "2"))
        with pytest.raises(DestinationError):
            adapter.execute(connection, dataset, insert, ("x", "1"))

    def test_driver_errors_are_destination_errors(
        self, adapter: DestinationAdapter, connection: Any, dataset: str
    ) -> None:
        adapter.ensure_dataset(connection, dataset)
        with pytest.raises(DestinationError):
            adapter.query(connection, dataset, Statement("SELECT * FROM {no_such_table}"))

    # -- transactions ----------------------------------------------------------------------------

    def test_transaction_rolls_back_on_error(
        self, adapter: DestinationAdapter, probe: Any, dataset: str
    ) -> None:
        if not adapter.capabilities.transactions:
            pytest.skip("adapter declares transactions=False")
        with pytest.raises(RuntimeError):
            with adapter.transaction(probe):
                self._insert(adapter, probe, dataset, (1, "gone", None, None, None))
                raise RuntimeError("abort")
        with adapter.transaction(probe):
            self._insert(adapter, probe, dataset, (2, "kept", None, None, None))
        assert adapter.query(probe, dataset, Statement("SELECT id FROM {kit_probe}")) == [(2,)]

    # -- round trips -----------------------------------------------------------------------------

    def test_unicode_round_trip(
        self, adapter: DestinationAdapter, probe: Any, dataset: str
    ) -> None:
        values = ["Zürich — 東京 — 🚀", "ß" * 1000, "\u00e9\u0301", "tab\tand\\n"]
        for i, value in enumerate(values):
            self._insert(adapter, probe, dataset, (i, value, None, None, None))
        assert [self._row(adapter, probe, dataset, i)[1] for i in range(len(values))] == values

    def test_null_round_trip(self, adapter: DestinationAdapter, probe: Any, dataset: str) -> None:
        self._insert(adapter, probe, dataset, (1, None, None, None, None))
        assert self._row(adapter, probe, dataset, 1) == (1, None, None, None, None)
        nulls = Statement(
            "SELECT COUNT(*) FROM {kit_probe} WHERE txt IS NULL AND ts IS NULL AND flag IS NULL"
        )
        assert adapter.query(probe, dataset, nulls) == [(1,)]

    def test_scalar_types_round_trip(
        self, adapter: DestinationAdapter, probe: Any, dataset: str
    ) -> None:
        self._insert(adapter, probe, dataset, (2**62, "big", 0.1, True, None))
        self._insert(adapter, probe, dataset, (-5, "neg", -1.5e300, False, None))
        assert self._row(adapter, probe, dataset, 2**62)[:4] == (2**62, "big", 0.1, True)
        assert self._row(adapter, probe, dataset, -5)[:4] == (-5, "neg", -1.5e300, False)

    def test_timestamptz_round_trip(
        self, adapter: DestinationAdapter, probe: Any, dataset: str
    ) -> None:
        plus_two = timezone(timedelta(hours=2))
        stamps = [
            datetime(2026, 7, 16, 15, 49, 27, 906870, tzinfo=UTC),
            datetime(2026, 7, 16, 17, 49, 27, 906871, tzinfo=plus_two),
            datetime(1999, 12, 31, 23, 59, 59, tzinfo=timezone(timedelta(hours=-8))),
        ]
        for i, ts in enumerate(stamps):
            self._insert(adapter, probe, dataset, (i, None, None, None, ts))
        for i, ts in enumerate(stamps):
            got = self._row(adapter, probe, dataset, i)[4]
            assert isinstance(got, datetime) and got.tzinfo is not None, f"naive: {got!r}"
            assert got == ts, f"{got!r} is not the instant {ts!r}"
        later = Statement("SELECT id FROM {kit_probe} WHERE ts >= ? ORDER BY id")
        cutoff = datetime(2026, 7, 16, 15, 49, 27, 906871, tzinfo=UTC)
        assert adapter.query(probe, dataset, later, (cutoff,)) == [(1,)]

    def test_timestamptz_compares_instants_across_offsets(
        self, adapter: DestinationAdapter, probe: Any, dataset: str
    ) -> None:
        """Leases and heartbeats are compared in SQL (``lease_expires_at < ?``): the engine
        must order instants, not their text. Here the wall-clock order of the values is the
        reverse of their order in time, so storing local-offset text cannot pass by chance."""
        west, east = timezone(timedelta(hours=-8)), timezone(timedelta(hours=2))
        late = datetime(2026, 7, 16, 10, 0, tzinfo=west)  # 18:00 UTC, reads "10:00"
        early = datetime(2026, 7, 16, 12, 0, tzinfo=east)  # 10:00 UTC, reads "12:00"
        self._insert(adapter, probe, dataset, (1, "late", None, None, late))
        self._insert(adapter, probe, dataset, (2, "early", None, None, early))
        cutoff = datetime(2026, 7, 16, 11, 0, tzinfo=UTC)
        for op, expected in (("<", [(2,)]), ("<=", [(2,)]), (">", [(1,)]), (">=", [(1,)])):
            stmt = Statement(f"SELECT id FROM {{kit_probe}} WHERE ts {op} ? ORDER BY id")
            got = adapter.query(probe, dataset, stmt, (cutoff,))
            assert got == expected, f"ts {op} {cutoff.isoformat()}: {got}, not {expected}"
        in_time = Statement("SELECT id FROM {kit_probe} ORDER BY ts")
        assert adapter.query(probe, dataset, in_time) == [(2,), (1,)], "ORDER BY ts"
        newest = Statement("SELECT max(ts) FROM {kit_probe}")
        assert adapter.query(probe, dataset, newest)[0][0] == late, "max(ts)"

    # -- bulk insert ---------------------------------------------------------------------------

    def test_insert_rows_lands_every_row_in_order(
        self, adapter: DestinationAdapter, probe: Any, dataset: str
    ) -> None:
        # what checkpoint writers hand over: a batch of rows with NULLs scattered, a column that
        # is NULL in every row, hostile text, and instants in several offsets
        plus_two = timezone(timedelta(hours=2))
        t0 = datetime(2026, 7, 16, 15, 49, 27, 906870, tzinfo=UTC)
        rows = [
            (
                i,
                None if i % 7 == 0 else HOSTILE_VALUES[i % len(HOSTILE_VALUES)] + f" #{i}",
                None if i % 5 == 0 else i / 4 - 3.5,
                None,
                None if i % 3 == 0 else (t0 + timedelta(seconds=i)).astimezone(plus_two),
            )
            for i in range(1, 61)
        ]
        rows[0] = (2**62, "Zürich — 東京 — 🚀", -1.5e300, None, t0)
        for batch in (rows[:1], rows[1:]):
            landed = adapter.insert_rows(probe, dataset, PROBE, batch)
            if adapter.capabilities.rowcount:
                assert landed == len(batch)
        got = adapter.query(
            probe, dataset, Statement("SELECT id, txt, num, flag, ts FROM {kit_probe}")
        )
        assert sorted(got, key=lambda r: r[0]) == sorted(rows, key=lambda r: r[0])
        assert adapter.insert_rows(probe, dataset, PROBE, []) == 0
        assert adapter.query(probe, dataset, COUNT) == [(len(rows),)]

    # -- the threading contract ----------------------------------------------------------------

    def test_connection_used_from_a_second_thread(
        self, adapter: DestinationAdapter, probe: Any, dataset: str
    ) -> None:
        """A run's heartbeat thread writes through the connection the command opened."""
        errors: list[BaseException] = []

        def heartbeat() -> None:
            try:
                self._insert(adapter, probe, dataset, (1, "from thread", None, None, None))
                assert self._row(adapter, probe, dataset, 1)[1] == "from thread"
            except BaseException as exc:  # reported from the test's own thread below
                errors.append(exc)

        worker = threading.Thread(target=heartbeat)
        worker.start()
        worker.join(timeout=120)
        assert not worker.is_alive(), "the second thread never finished"
        assert not errors, (
            f"a client opened in one thread must be usable from another: {errors[0]!r}"
        )
        assert self._row(adapter, probe, dataset, 1)[1] == "from thread"

    def test_two_concurrent_writers(
        self, adapter: DestinationAdapter, target: ConnectionTarget, probe: Any, dataset: str
    ) -> None:
        """Two clients on one database write at once; a compare-and-swap has one winner."""
        second = adapter.connect(target)
        try:
            start = threading.Barrier(2, timeout=120)
            errors: list[BaseException] = []
            claims: list[int | BaseException] = []

            def writer(client: Any, first_id: int) -> None:
                try:
                    start.wait()
                    for i in range(first_id, first_id + 10):
                        row = (i, f"w{first_id}", None, None, None)
                        self._insert(adapter, client, dataset, row)
                    start.wait()
                    claim = Statement("UPDATE {kit_probe} SET txt = ? WHERE id = ? AND txt = ?")
                    try:
                        claims.append(adapter.execute(client, dataset, claim, ("won", 0, "w0")))
                    except DestinationError as exc:  # losing a write conflict is a loss too
                        claims.append(exc)
                except BaseException as exc:
                    errors.append(exc)
                    start.abort()  # release the other writer instead of leaving it waiting

            threads = [
                threading.Thread(target=writer, args=(probe, 0)),
                threading.Thread(target=writer, args=(second, 100)),
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=240)
            assert not any(t.is_alive() for t in threads), "a writer never finished"
            assert not errors, f"concurrent writers failed: {errors[0]!r}"
            assert adapter.query(probe, dataset, COUNT) == [(20,)]
            if adapter.capabilities.rowcount:
                assert sorted(c for c in claims if isinstance(c, int)).count(1) == 1, claims
        finally:
            adapter.close(second)

    def _two_transactions(
        self,
        adapter: DestinationAdapter,
        clients: tuple[Any, Any],
        dataset: str,
        work: Any,
    ) -> list[Any]:
        """Run ``work(client, n)`` inside a transaction on each client at once, both having
        read the probe table before either writes (where the engine lets the second begin);
        returns each side's result or the exception it raised."""
        read = threading.Barrier(2)
        results: list[Any] = [None, None]

        def side(n: int) -> None:
            try:
                with adapter.transaction(clients[n]):
                    adapter.query(clients[n], dataset, COUNT)
                    try:
                        # bounded: an engine whose BEGIN waits for the other transaction
                        # (SQLite's BEGIN IMMEDIATE) never lets both read first, and is right
                        read.wait(timeout=3)
                    except threading.BrokenBarrierError:
                        pass
                    results[n] = work(clients[n], n)
            except BaseException as exc:  # reported from the test's own thread
                results[n] = exc

        threads = [threading.Thread(target=side, args=(n,)) for n in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=240)
        assert not any(t.is_alive() for t in threads), "a transaction never finished"
        return results

    def test_two_concurrent_transactions_both_commit(
        self, adapter: DestinationAdapter, target: ConnectionTarget, probe: Any, dataset: str
    ) -> None:
        """Two clients read, then insert rows of their own, in transactions at the same time
        (receipts of two backfill workers): both commit. An engine that takes its write lock
        only at the first write (SQLite's plain deferred ``BEGIN``) answers the second writer
        "database is locked" at once instead of letting it wait: a lost receipt."""
        if not adapter.capabilities.transactions:
            pytest.skip("adapter declares transactions=False")
        second = adapter.connect(target)
        try:

            def insert_own(client: Any, n: int) -> int:
                for i in range(3):
                    self._insert(adapter, client, dataset, (10 * n + i, f"t{n}", None, None, None))
                return n

            results = self._two_transactions(adapter, (probe, second), dataset, insert_own)
        finally:
            adapter.close(second)
        assert results == [0, 1], f"concurrent transactions failed: {results!r}"
        assert adapter.query(probe, dataset, COUNT) == [(6,)]

    def test_compare_and_swap_in_concurrent_transactions_has_one_winner(
        self, adapter: DestinationAdapter, target: ConnectionTarget, probe: Any, dataset: str
    ) -> None:
        """Two clients, each in a transaction, read a pending row and claim it: exactly one
        claim takes; the other sees 0 rows affected or loses a write conflict (an error the
        caller treats as a lost claim), and the row holds the winner's name."""
        if not adapter.capabilities.transactions:
            pytest.skip("adapter declares transactions=False")
        self._insert(adapter, probe, dataset, (0, "pending", None, None, None))
        claim = Statement("UPDATE {kit_probe} SET txt = ? WHERE id = ? AND txt = ?")
        second = adapter.connect(target)
        try:

            def swap(client: Any, n: int) -> int:
                return adapter.execute(client, dataset, claim, (f"won by {n}", 0, "pending"))

            results = self._two_transactions(adapter, (probe, second), dataset, swap)
        finally:
            adapter.close(second)
        odd = [r for r in results if not isinstance(r, int | DestinationError)]
        assert not odd, f"a claim failed with something else than a conflict: {odd!r}"
        winners = [n for n, r in enumerate(results) if r == 1]
        if adapter.capabilities.rowcount:
            assert len(winners) == 1, f"claims: {results!r}"
        held = adapter.query(probe, dataset, Statement("SELECT txt FROM {kit_probe} WHERE id = 0"))
        assert held in ([(f"won by {n}",)] for n in (winners or (0, 1))), held

    # -- readers ---------------------------------------------------------------------------------

    def test_read_only_look_at_an_absent_database_reads_empty(
        self, adapter: DestinationAdapter, absent_target: ConnectionTarget
    ) -> None:
        """``status`` on a project that never ran: nothing found, and nothing created."""
        assert absent_target.read_only
        client = adapter.connect(absent_target)
        try:
            assert adapter.fetch_columns(client, absent_target.dataset, PROBE.name) is None
        finally:
            adapter.close(client)
        created = list(absent_target.project_root.iterdir())
        assert created == [], f"a read-only look created {created}"

    def test_content_stamp_never_outlives_a_write(
        self, adapter: DestinationAdapter, probe: Any, dataset: str, target: ConnectionTarget
    ) -> None:
        """Read-only commands trust an unchanged stamp to mean unchanged content: whatever
        stamp the adapter gave before a write, it must not give after it."""
        reading = dataclasses.replace(target, read_only=True)
        before = adapter.content_stamp(reading)
        assert before is None or isinstance(before, str)
        self._insert(adapter, probe, dataset, (1, "x", None, None, None))
        after = adapter.content_stamp(reading)
        assert after is None or isinstance(after, str)
        if before is not None:
            assert after != before, "a write left the content stamp as it was"

    # -- nested transactions ---------------------------------------------------------------------

    def test_nested_transaction_joins_the_outer_one(
        self, adapter: DestinationAdapter, probe: Any, dataset: str
    ) -> None:
        if not adapter.capabilities.transactions:
            pytest.skip("adapter declares transactions=False")
        ids = Statement("SELECT id FROM {kit_probe} ORDER BY id")
        if not adapter.capabilities.nested_transactions:
            with pytest.raises(RuntimeError):
                with adapter.transaction(probe):
                    self._insert(adapter, probe, dataset, (1, "outer", None, None, None))
                    with pytest.raises(DestinationError):
                        with adapter.transaction(probe):
                            pass
                    raise RuntimeError("abort")
            assert adapter.query(probe, dataset, ids) == []
            return
        with adapter.transaction(probe):
            self._insert(adapter, probe, dataset, (1, "outer", None, None, None))
            with adapter.transaction(probe):
                self._insert(adapter, probe, dataset, (2, "inner", None, None, None))
            self._insert(adapter, probe, dataset, (3, "outer again", None, None, None))
        assert adapter.query(probe, dataset, ids) == [(1,), (2,), (3,)]
        with pytest.raises(RuntimeError):
            with adapter.transaction(probe):
                self._insert(adapter, probe, dataset, (4, "outer", None, None, None))
                with adapter.transaction(probe):
                    self._insert(adapter, probe, dataset, (5, "inner", None, None, None))
                raise RuntimeError("abort")
        # the inner block did not commit on its own: the outer rollback took it along
        assert adapter.query(probe, dataset, ids) == [(1,), (2,), (3,)]
