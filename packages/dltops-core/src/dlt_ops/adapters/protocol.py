"""The ``DestinationAdapter`` protocol every destination package implements."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

from dlt_ops.adapters.model import Capabilities, ColumnInfo, ConnectionTarget, TableSpec
from dlt_ops.adapters.statements import Statement, flatten, insert_values
from dlt_ops.plugins.kinds import Kind


@runtime_checkable
class SqlClient(Protocol):
    """A live native connection opened by an adapter; one serves a whole command."""

    def close(self) -> None:
        """Close the connection (idempotent)."""


@runtime_checkable
class DestinationAdapter(Protocol):
    """Speaks dlt-ops' state-table SQL to one engine through its native driver.

    Adapters are stateless: every method receives the live client it works on. Values always
    travel as bound parameters; identifiers are validated against the grammar and quoted.

    Threading contract: a client is used by one thread at a time, but not always the thread
    that opened it (a run's heartbeat thread writes through the command's connection, with
    ``DestinationSession`` serializing the calls). Open clients so any thread may use them.

    Optional members (``dlt_setting_keys``, ``project_files``, ``dlt_destination``,
    ``measured_cost``, ``content_stamp``, ``insert_rows``) have defaults here, which an
    adapter inherits by subclassing this protocol (or ``SqlAdapterBase``, which does) and
    overrides where its engine has something to say.
    """

    # Read-only properties here, so an adapter may declare them as plain class attributes.

    @property
    def name(self) -> str:
        """dlt's engine name (the name in ``dlt.destinations.<engine>``)."""
        ...

    @property
    def capabilities(self) -> Capabilities:
        """What the engine can do, declared once (a frozen :class:`Capabilities`)."""
        ...

    @property
    def dlt_setting_keys(self) -> tuple[str, ...]:
        """dlt settings (not credentials) the adapter needs, delivered in
        ``ConnectionTarget.options``."""
        return ()

    @property
    def project_files(self) -> tuple[str, ...]:
        """Glob patterns of the files the engine keeps inside the project (an embedded
        database): ``init`` keeps them out of git, and starts a new project on such an engine
        (it needs no server and no credentials)."""
        return ()

    @property
    def preload_modules(self) -> tuple[str, ...]:
        """Modules a fresh process imports when it first connects (the engine's driver): the
        fork server of parallel runs and ``--workers`` imports them once, so no child pays for
        them. A hint only: read with this default even from an adapter that does not
        subclass the protocol."""
        return ()

    def connect(self, target: ConnectionTarget) -> SqlClient:
        """Open a native connection from the credentials dlt would use; fail within the timeout."""

    def close(self, client: SqlClient) -> None:
        """Close ``client``; never raises."""

    def quote_identifier(self, ident: str) -> str:
        """Validate ``ident`` against the grammar and quote it in the engine's style."""

    def table_ref(self, dataset: str, table: str) -> str:
        """The quoted, dataset-qualified reference to ``table``."""

    def render(self, stmt: Statement, dataset: str, n_params: int | None = None) -> str:
        """Render a canonical statement into the engine's SQL."""

    def execute(
        self, client: SqlClient, dataset: str, stmt: Statement, params: Sequence[Any] = ()
    ) -> int:
        """Run a statement; return rows affected for DML (0 for DDL)."""

    def query(
        self, client: SqlClient, dataset: str, stmt: Statement, params: Sequence[Any] = ()
    ) -> list[tuple[Any, ...]]:
        """Run a query and return all rows as tuples."""

    def ensure_dataset(self, client: SqlClient, dataset: str) -> None:
        """Create the dataset/schema if the engine allows it; otherwise do nothing."""

    def create_table(self, client: SqlClient, dataset: str, spec: TableSpec) -> None:
        """Create ``spec`` if it does not exist (idempotent)."""

    def drop_table(self, client: SqlClient, dataset: str, table: str) -> None:
        """Drop ``table`` if it exists (idempotent)."""

    def fetch_columns(self, client: SqlClient, dataset: str, table: str) -> list[ColumnInfo] | None:
        """Columns of ``table`` in order; ``None`` (not ``[]``) when table or dataset is absent."""

    def transaction(self, client: SqlClient) -> AbstractContextManager[None]:
        """Run the enclosed statements atomically (when ``capabilities.transactions``)."""

    # -- optional members (defaults inherited by subclassing) ------------------------------------

    def dlt_destination(self, target: ConnectionTarget) -> Any | None:
        """The dlt destination a run loads through, when the adapter must pin it (e.g. to the
        project-relative file it reads); ``None`` lets dlt build it from the project's config."""
        return None

    def evolve_table(self, client: SqlClient, dataset: str, spec: TableSpec) -> list[str]:
        """Create ``spec`` when absent, else add the columns an existing table lacks and
        return their names. The default only creates (a table an older version made keeps
        its columns); ``BaseSqlAdapter`` adds them with ``ALTER TABLE ... ADD COLUMN``."""
        self.create_table(client, dataset, spec)
        return []

    def measured_cost(self, client: SqlClient, dataset: str, run: Any) -> float | None:
        """What the destination billed for ``run``'s load, in dollars (``None``: not known).

        ``run`` is the run's ledger record (``started_at``, ``completed_at``, ``dlt_run_id``...).
        """
        return None

    def insert_rows(
        self, client: SqlClient, dataset: str, spec: TableSpec, rows: Sequence[Sequence[Any]]
    ) -> int:
        """Insert ``rows`` (values in ``spec.columns`` order) in one statement, one commit;
        return rows affected. The default binds every value of a multi-row ``VALUES``; an
        engine with a cheaper bulk form (bound arrays) overrides it."""
        if not rows:
            return 0
        columns = tuple(c.name for c in spec.columns)
        stmt = insert_values(spec.name, columns, len(rows))
        return self.execute(client, dataset, stmt, flatten(rows))

    def content_stamp(self, target: ConnectionTarget) -> str | None:
        """A fingerprint of everything a read of ``target`` could see, taken without
        connecting, that every later write changes; ``None`` when the adapter cannot promise
        that (now or ever). Read-only commands answer a repeated read under an unchanged stamp
        from ``.dlt-ops/ledger-reads.json`` instead of connecting."""
        return None

    def database_identity(self, target: ConnectionTarget) -> str | None:
        """Which physical database ``target`` opens, as a string that holds no secret (an
        embedded file's absolute path); ``None`` lets the core use the credentials with their
        passwords removed. Sources whose targets name one database and one dataset share a
        session, a read-cache entry and one read in every fleet-wide listing."""
        return None


#: What ``dlt_ops_register_destinations`` registers: usually the adapter class.
DestinationAdapterFactory = Callable[[], DestinationAdapter]


def build_registered(registered: object) -> object:
    """The adapter a registration stands for: a class or factory is called, an instance (it
    has ``connect``) is kept. Unchecked: see ``dlt_ops.destinations.instantiate_adapter``."""
    if isinstance(registered, type) or (
        callable(registered) and not hasattr(registered, "connect")
    ):
        return registered()
    return registered


#: The typed key: ``registry.get(DESTINATION, name)`` is a :data:`DestinationAdapterFactory`.
DESTINATION: Kind[DestinationAdapterFactory] = Kind("destination", DestinationAdapterFactory)
