"""Derived adapters: a dlt SQL destination with no adapter package, driven by dlt's own client.

``[dlt_ops] derived_adapters = ["<engine>"]`` opts a project in. For each listed engine that no
installed plugin claims, :func:`add_derived_adapters` registers an inline plugin (through the
same registration hook as any plugin) whose adapter opens dlt's job client for that
destination and speaks through its SQL client. Everything engine-specific comes from dlt:
identifier quoting and length, transactions, whether timestamps keep their time zone, the
driver's parameter style and the table introspection. Such an adapter runs at the ``derived``
tier: it works for any destination dlt drives through SQL, but no one ran the conformance kit
on that engine for you, so ``run``, ``status`` and ``plugins list`` call it untested.

Nothing here imports dlt until an adapter is built.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from dlt_ops import hookimpl
from dlt_ops.adapters.base import SqlAdapterBase
from dlt_ops.adapters.derived_label import plugin_value
from dlt_ops.adapters.derived_paths import project_credentials, sqlite_file
from dlt_ops.adapters.dlt_credentials import explicit_destination
from dlt_ops.adapters.model import Capabilities, ColumnInfo, ColumnType, ConnectionTarget
from dlt_ops.adapters.statements import Statement
from dlt_ops.errors import DestinationError

if TYPE_CHECKING:
    from dlt_ops.plugins import PluginRegistry

TIER = "derived"

#: How datetimes travel on engines without time-zone-aware timestamps: fixed-width UTC text,
#: so text comparison orders instants and reading it back restores an aware datetime.
_UTC_TEXT = "%Y-%m-%d %H:%M:%S.%f+00:00"
_UTC_TEXT_RE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}\+00:00")
_MEMORY = ":memory:"


@dataclass
class DerivedConnection:
    """dlt's job client and its open SQL client, or a stand-in for an absent database."""

    job: Any = None
    sql: Any = None
    #: dlt's open transaction context, held between ``BEGIN`` and ``COMMIT``/``ROLLBACK``
    tx: Any = None
    closed: bool = False

    @property
    def absent(self) -> bool:
        """A read-only look at a database file that does not exist: everything reads empty."""
        return self.sql is None

    def close(self) -> None:
        """Return the connection to dlt (idempotent)."""
        if not self.closed:
            self.closed = True
            if self.sql is not None:
                self.sql.close_connection()


def _names_a_missing_file(credentials: Any) -> bool:
    """Whether dlt's resolved credentials point at a local database file that does not exist.

    File engines name their database by path (``…/x.db``, ``x.db``); a server's database
    is a bare name, which this never takes for a file.
    """
    database = getattr(credentials, "database", None)
    if not isinstance(database, str) or not database:
        return False  # no database named by path: a server or a warehouse, never absent here
    if database.startswith(_MEMORY):
        return True  # a fresh in-memory database holds nothing to read
    path = Path(database).expanduser()
    looks_like_file = path.suffix != "" or "/" in database or "\\" in database
    return looks_like_file and not path.exists()


class DerivedAdapter(SqlAdapterBase):
    """The adapter contract over dlt's SQL client; :func:`derive_adapter` builds one per engine."""

    name: ClassVar[str] = ""
    #: the engine keeps no time zone: datetimes are bound and read back as fixed-width UTC text
    timestamps_as_text: ClassVar[bool] = False
    #: the driver's DB-API ``paramstyle`` as dlt's SQL client declares it
    paramstyle: ClassVar[str] = "format"

    # -- rendering ----------------------------------------------------------------------------

    #: dlt's identifier quoting for the engine (``None``: standard SQL double quotes)
    escape_identifier: ClassVar[Callable[[str], str] | None] = None

    def quote_identifier(self, ident: str) -> str:
        """Validate against the grammar, then quote the way dlt quotes for this engine."""
        quoted = super().quote_identifier(ident)
        escape = type(self).escape_identifier
        return quoted if escape is None else escape(ident)

    def _placeholder(self, index: int) -> str:
        return "?" if self.paramstyle == "qmark" else "%s"

    def render(self, stmt: Statement, dataset: str, n_params: int | None = None) -> str:
        """Render for dlt's ``execute_query``: its ``%s`` convention, literals escaped to match."""
        percent = self.paramstyle != "qmark" and bool(n_params)
        named = self.paramstyle == "named"  # dlt sends the text through SQLAlchemy's text()

        def escape(text: str) -> str:
            text = text.replace("%", "%%") if percent else text
            return text.replace(":", "\\:") if named else text

        return stmt.render(
            quote=self.quote_identifier,
            table=lambda t: self.table_ref(dataset, t),
            placeholder=self._placeholder,
            escape_text=escape,
            n_params=n_params,
        )

    @property
    def type_names(self) -> Mapping[ColumnType, str]:  # type: ignore[override]
        """Standard SQL names (time zones as text where the engine keeps none)."""
        stamp = "VARCHAR" if self.timestamps_as_text else "TIMESTAMP WITH TIME ZONE"
        return {**SqlAdapterBase.type_names, ColumnType.TIMESTAMPTZ: stamp}

    # -- driver calls -----------------------------------------------------------------------

    def _open(self, target: ConnectionTarget) -> DerivedConnection:
        from dlt.common.schema import Schema

        credentials = project_credentials(target.credentials, target.project_root)
        dest, config = _dlt_config(self.name, credentials, target.dataset)
        if target.read_only and _names_a_missing_file(config.credentials):
            return DerivedConnection()  # a reader never creates the database
        job = dest.client(Schema("dlt_ops"), config)
        job.sql_client.open_connection()
        return DerivedConnection(job, job.sql_client)

    def dlt_destination(self, target: ConnectionTarget) -> Any:
        """dlt's destination with the credentials this adapter connects with, handed over
        explicitly: dlt would look them up again from the current directory (or from the
        ``.dlt/`` its config providers first read), and refuses any found in ``config.toml``."""
        credentials = project_credentials(target.credentials, target.project_root)
        if credentials is None:
            return None  # nothing found: dlt resolves (and reports) them itself
        return explicit_destination(self.name, credentials)

    def database_identity(self, target: ConnectionTarget) -> str | None:
        """A SQLite file's absolute path, however the credentials spell it (``None``: the
        credentials without their secrets)."""
        return sqlite_file(project_credentials(target.credentials, target.project_root))

    def _bind(self, value: Any) -> Any:
        if isinstance(value, datetime) and value.tzinfo is not None:
            value = value.astimezone(UTC)
            return value.strftime(_UTC_TEXT) if self.timestamps_as_text else value
        return value

    def _read(self, value: Any) -> Any:
        if self.timestamps_as_text and isinstance(value, str) and _UTC_TEXT_RE.fullmatch(value):
            return datetime.strptime(value[:-6], _UTC_TEXT[:-6]).replace(tzinfo=UTC)
        if isinstance(value, datetime) and value.tzinfo is None and not self.timestamps_as_text:
            return value.replace(tzinfo=UTC)  # drivers that hand back UTC without the zone
        return value

    def _run(self, client: Any, sql: str, params: Sequence[Any], *, fetch: bool) -> Any:
        conn: DerivedConnection = client
        if conn.absent:
            if fetch:
                return []
            raise DestinationError("the database does not exist (opened read-only)")
        bound = tuple(self._bind(p) for p in params)
        with conn.sql.execute_query(sql, *bound) as cursor:
            if fetch:
                return [tuple(self._read(v) for v in row) for row in cursor.fetchall() or []]
            count = getattr(cursor, "rowcount", None)
            if isinstance(count, int) and count >= 0:
                return count
            # drivers that answer DML with a one-row count instead of a rowcount
            rows = cursor.fetchall() if getattr(cursor, "description", None) else []
            return rows[0][0] if rows and len(rows[0]) == 1 and isinstance(rows[0][0], int) else 0

    def _close(self, client: Any) -> None:
        client.close()

    def _begin(self, client: Any) -> None:
        conn: DerivedConnection = client
        if conn.absent:
            return
        # dlt's transaction is a context manager; hold it open until commit or rollback
        conn.tx = conn.sql.begin_transaction()
        conn.tx.__enter__()

    def _commit(self, client: Any) -> None:
        cm, client.tx = client.tx, None
        if cm is not None:
            cm.__exit__(None, None, None)

    def _rollback(self, client: Any) -> None:
        cm, client.tx = client.tx, None
        if cm is not None:
            error = RuntimeError("rolled back")
            try:
                cm.__exit__(RuntimeError, error, None)
            except RuntimeError as exc:
                if exc is not error:
                    raise

    # -- datasets and introspection ------------------------------------------------------------

    def table_ref(self, dataset: str, table: str) -> str:
        """dlt's qualified name for ``table`` in ``dataset`` (both validated first)."""
        self.quote_identifier(dataset)
        self.quote_identifier(table)
        return f"{self.quote_identifier(dataset)}.{self.quote_identifier(table)}"

    def ensure_dataset(self, client: Any, dataset: str) -> None:
        """Create the dataset through dlt's SQL client when it is missing."""
        conn: DerivedConnection = client
        self.quote_identifier(dataset)
        if conn.absent:
            raise DestinationError("the database does not exist (opened read-only)")
        try:
            with conn.sql.with_alternative_dataset_name(dataset) as sql:
                if not sql.has_dataset():
                    sql.create_dataset()
        except Exception as exc:
            raise self._wrap(exc, f"could not create dataset {dataset}") from exc

    def fetch_columns(self, client: Any, dataset: str, table: str) -> list[ColumnInfo] | None:
        """Columns in order as dlt's job client reads them; ``None`` when absent."""
        conn: DerivedConnection = client
        self.quote_identifier(dataset)
        self.quote_identifier(table)
        if conn.absent:
            return None
        try:
            with conn.sql.with_alternative_dataset_name(dataset) as sql:
                if not sql.has_dataset():
                    return None
                found = dict(conn.job.get_storage_tables([table]))
        except Exception as exc:
            raise self._wrap(exc, f"could not read the columns of {dataset}.{table}") from exc
        columns = found.get(table) or {}
        return [
            ColumnInfo(str(name), str(col.get("data_type") or "unknown"))
            for name, col in columns.items()
        ] or None


def _dlt_config(engine: str, credentials: Any, dataset: str) -> tuple[Any, Any]:
    """dlt's destination factory for ``engine`` and its resolved configuration."""
    dest = explicit_destination(engine, credentials)
    spec = dest.spec()
    spec["dataset_name"] = dataset
    return dest, dest.configuration(spec)


@functools.lru_cache(maxsize=32)
def _dlt_capabilities(engine: str, credentials_key: str) -> tuple[Any, str]:
    """dlt's capabilities for ``engine`` (they can depend on the credentials, e.g. a dialect)
    and the DB-API paramstyle its SQL client declares."""
    credentials = json.loads(credentials_key) if credentials_key else None
    dest = explicit_destination(engine, credentials)
    try:
        spec = dest.spec()
        spec["dataset_name"] = "dlt_ops"
        config = dest.configuration(spec, accept_partial=True)
        caps = dest.capabilities(config)
    except Exception:  # credentials not resolvable yet: dlt's defaults for the engine
        config, caps = None, dest.capabilities()
    client_class = dest.client_class
    sql_class = getattr(client_class, "sql_client_class", None)
    paramstyle = "format"
    try:
        from dlt.common.schema import Schema

        if config is not None:
            paramstyle = str(dest.client(Schema("dlt_ops"), config).sql_client.dbapi.paramstyle)
    except Exception:
        paramstyle = str(getattr(getattr(sql_class, "dbapi", None), "paramstyle", "format"))
    return caps, paramstyle


def _dlt_quoting(escape: Callable[[str], str] | None) -> Callable[[str], str] | None:
    """dlt's quoting function when it quotes; some clients (SQLAlchemy) leave names bare and
    quote later, which text statements cannot rely on."""
    if escape is None or escape("x") == "x":
        return None
    return escape


@functools.lru_cache(maxsize=32)
def _adapter_class(engine: str, credentials_key: str) -> type[DerivedAdapter]:
    caps, paramstyle = _dlt_capabilities(engine, credentials_key)
    lengths = [n for n in (caps.max_identifier_length, caps.max_column_identifier_length) if n]
    declared = Capabilities(
        create_schema=True,
        if_exists_ddl=True,
        unique_constraints=True,
        transactions=caps.supports_transactions is not False,
        rowcount=True,
        # dlt's limit, but never past 255: state-table names are short, and longer ones are
        # more likely a mistake than a need
        max_identifier_length=min([*lengths, 255]),
    )
    quoting = _dlt_quoting(caps.escape_identifier)
    attrs = {
        "name": engine,
        "capabilities": declared,
        "timestamps_as_text": not caps.supports_tz_aware_datetime,
        "paramstyle": paramstyle,
        "escape_identifier": staticmethod(quoting) if quoting is not None else None,
        "__doc__": f"Derived adapter for dlt's '{engine}' destination.",
    }
    return type(f"Derived_{engine}", (DerivedAdapter,), attrs)


def derive_adapter(engine: str, credentials: Any = None) -> DerivedAdapter:
    """An adapter for dlt's ``engine`` destination, its capabilities taken from dlt.

    ``credentials`` (what dlt would resolve) matter where dlt's capabilities depend on them,
    e.g. the SQL dialect behind a connection string.
    """
    key = json.dumps(credentials, sort_keys=True, default=str) if credentials else ""
    return _adapter_class(engine, key)()


class _DerivedPlugin:
    """One inline plugin per derived engine, registered through the ordinary hook."""

    def __init__(self, engine: str, credentials: Callable[[], Any]) -> None:
        self.__name__ = plugin_value(engine)
        self.engine = engine
        self._credentials = credentials

    @hookimpl
    def dlt_ops_register_destinations(self, register: Callable[..., None]) -> None:
        engine, credentials = self.engine, self._credentials
        register(lambda: derive_adapter(engine, credentials()), name=engine)


def add_derived_adapters(
    registry: PluginRegistry, engines: Iterable[str], credentials: Callable[[str], Any]
) -> None:
    """Register a derived adapter for each of ``engines`` that no installed plugin claims.

    ``credentials(engine)`` resolves what dlt would use, only when an adapter is built.
    """
    for engine in dict.fromkeys(engines):
        if not registry.has("destination", engine):
            plugin = _DerivedPlugin(engine, functools.partial(credentials, engine))
            registry.add_plugin(plugin, name=engine, kind="destination")
