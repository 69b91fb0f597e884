"""From a source's config to a live destination session: engine name, adapter, credentials."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dlt_ops.adapters import (
    Capabilities,
    ConnectionTarget,
    DestinationAdapter,
    DestinationSession,
)
from dlt_ops.config import ProjectConfig
from dlt_ops.config.credentials import resolve_credentials, resolve_destination_setting
from dlt_ops.errors import PluginError
from dlt_ops.plugins import PluginRegistry

_DLT_PREFIX = "dlt.destinations."


def engine_name(destination: str) -> str:
    """dlt's engine name for a destination reference (``dlt.destinations.duckdb`` → ``duckdb``)."""
    return destination[len(_DLT_PREFIX) :] if destination.startswith(_DLT_PREFIX) else destination


DUCKDB_MEMORY = ":memory:"


def duckdb_database_path(target: ConnectionTarget) -> str:
    """The DuckDB file dlt would use, resolved against the project root (never the cwd).

    Accepts dlt's forms: a path, ``duckdb:///path``, a ``{"database": path}`` mapping, or
    nothing (dlt's default ``<pipeline_name>.duckdb``). Lives in core because both the adapter
    and the runner (which pins dlt to the same file) need it, adapter installed or not.
    """
    creds = target.credentials
    if isinstance(creds, dict):
        creds = creds.get("database")
    if isinstance(creds, str) and creds.startswith("duckdb:///"):
        creds = creds[len("duckdb:///") :]
    if creds is None or creds == "":
        creds = f"{target.pipeline_name or target.dataset}.duckdb"
    creds = str(creds)
    if creds.startswith(DUCKDB_MEMORY):
        return DUCKDB_MEMORY
    path = Path(creds).expanduser()
    return str(path if path.is_absolute() else target.project_root / path)


def pipeline_name_for(source: str) -> str:
    """The dlt pipeline name dlt-ops uses for a source."""
    return f"{source}_pipeline"


_ADAPTER_METHODS = (
    "connect",
    "close",
    "quote_identifier",
    "table_ref",
    "render",
    "execute",
    "query",
    "ensure_dataset",
    "create_table",
    "drop_table",
    "fetch_columns",
    "transaction",
)


def adapter_problems(adapter: object) -> list[str]:
    """Protocol members ``adapter`` lacks (empty when it is complete)."""
    missing = [m for m in _ADAPTER_METHODS if not callable(getattr(adapter, m, None))]
    if not isinstance(getattr(adapter, "capabilities", None), Capabilities):
        missing.append("capabilities")
    if not isinstance(getattr(adapter, "name", None), str):
        missing.append("name")
    return missing


def instantiate_adapter(engine: str, registered: object) -> DestinationAdapter:
    """Turn what a plugin registered (a class, factory or instance) into a checked adapter."""
    adapter = (
        registered()
        if isinstance(registered, type) or not hasattr(registered, "connect")
        else registered
    )
    missing = adapter_problems(adapter)
    if missing:
        raise PluginError(
            f"destination adapter '{engine}' is missing required member(s): "
            f"{', '.join(missing)}. Update the adapter package; `dlt-ops plugins doctor` "
            f"shows where it comes from."
        )
    return adapter  # type: ignore[return-value]


def load_adapter(registry: PluginRegistry, engine: str) -> DestinationAdapter:
    """The checked adapter registered for ``engine``."""
    return instantiate_adapter(engine, registry.get("destination", engine))


@dataclass(frozen=True)
class ResolvedDestination:
    """Where a source's state lives: engine, dataset, pipeline name."""

    engine: str
    dataset: str
    pipeline_name: str


def resolve_destination(
    config: ProjectConfig, source: str, dataset_override: str | None = None
) -> ResolvedDestination:
    """Resolve a source's destination and dataset from config (raises on missing config)."""
    return ResolvedDestination(
        engine=engine_name(config.destination_for(source)),
        dataset=config.dataset_for(source, dataset_override),
        pipeline_name=pipeline_name_for(source),
    )


def connection_target(
    config: ProjectConfig,
    where: ResolvedDestination,
    *,
    read_only: bool = False,
    setting_keys: tuple[str, ...] = (),
) -> ConnectionTarget:
    """The adapter's connection target, with credentials (and any destination settings the
    adapter asks for, e.g. BigQuery's ``location``) looked up as dlt would."""
    options: dict[str, object] = {}
    for key in setting_keys:
        value = resolve_destination_setting(config.root, where.engine, key, where.pipeline_name)
        if value is not None:
            options[key] = value
    return ConnectionTarget(
        destination=where.engine,
        dataset=where.dataset,
        project_root=config.root,
        credentials=resolve_credentials(config.root, where.engine, where.pipeline_name),
        pipeline_name=where.pipeline_name,
        connect_timeout_s=config.connect_timeout,
        read_only=read_only,
        options=options,
    )


def open_session(
    registry: PluginRegistry, config: ProjectConfig, where: ResolvedDestination
) -> DestinationSession:
    """Connect to ``where`` through its registered adapter."""
    adapter = load_adapter(registry, where.engine)
    keys = getattr(adapter, "dlt_setting_keys", ())
    return DestinationSession.open(adapter, connection_target(config, where, setting_keys=keys))
