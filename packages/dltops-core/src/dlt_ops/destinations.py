"""From a source's config to a live destination session: engine name, adapter, credentials.

Core code knows no engine by name: every engine fact (files, single writer, how dlt's
destination is built) is declared by the engine's adapter.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from dlt_ops.adapters import (
    Capabilities,
    ConnectionTarget,
    DestinationAdapter,
    DestinationSession,
)
from dlt_ops.adapters.protocol import DESTINATION, SqlClient, build_registered
from dlt_ops.config import ProjectConfig
from dlt_ops.config.credentials import resolve_credentials, resolve_destination_setting
from dlt_ops.errors import PluginError
from dlt_ops.plugins import PluginRegistry

_DLT_PREFIX = "dlt.destinations."
#: How long opening a single-writer database waits for another process to let go of it: a
#: run's ledger write and a reader's query each hold the file for milliseconds.
BUSY_WAIT_S = 3.0


def engine_name(destination: str) -> str:
    """dlt's engine name for a destination reference (``dlt.destinations.<engine>`` → engine)."""
    return destination[len(_DLT_PREFIX) :] if destination.startswith(_DLT_PREFIX) else destination


def pipeline_name_for(source: str) -> str:
    """The dlt pipeline name dlt-ops uses for a source."""
    return f"{source}_pipeline"


_ADAPTER_METHODS = (
    "connect",
    "dlt_destination",
    "measured_cost",
    "content_stamp",
    "insert_rows",
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
    for member in ("dlt_setting_keys", "project_files"):
        if not isinstance(getattr(adapter, member, None), tuple):
            missing.append(member)
    return missing


def instantiate_adapter(engine: str, registered: object) -> DestinationAdapter:
    """Turn what a plugin registered (a class, factory or instance) into a checked adapter."""
    adapter = build_registered(registered)
    missing = adapter_problems(adapter)
    if missing:
        raise PluginError(
            f"destination adapter '{engine}' is missing required member(s): "
            f"{', '.join(missing)}. Update the adapter package (subclassing "
            f"dlt_ops.adapters.DestinationAdapter or SqlAdapterBase supplies the optional "
            f"members); `dlt-ops plugins doctor` shows where it comes from."
        )
    return adapter  # type: ignore[return-value]


def project_registry(config: ProjectConfig) -> PluginRegistry:
    """A command's registry: installed plugins, the project's picks, the adapter a plugin
    registered for the dialect an engine's credentials name (``sqlalchemy+sqlite``, see
    :mod:`dlt_ops.adapters.dialects`), and a derived adapter for each engine in
    ``[dlt_ops] derived_adapters`` that no installed plugin claims."""
    registry = PluginRegistry(picks=config.plugins, disable=config.disabled_plugins)
    if any("+" in s.name for s in registry.sources("destination")):  # metadata only
        from dlt_ops.adapters.dialects import add_dialect_adapters

        add_dialect_adapters(
            registry, _project_engines(config), lambda e: resolve_credentials(config.root, e)
        )
    if config.derived_adapters:
        from dlt_ops.adapters.derived import add_derived_adapters

        add_derived_adapters(
            registry,
            config.derived_adapters,
            lambda engine: resolve_credentials(config.root, engine),
        )
    return registry


def _project_engines(config: ProjectConfig) -> list[str]:
    """The engines the project's sources load into (the default destination's too)."""
    named = [config.default_destination] + [s.destination for s in config.sources.values()]
    return [engine_name(d) for d in dict.fromkeys(n for n in named if n)]


def load_adapter(registry: PluginRegistry, engine: str) -> DestinationAdapter:
    """The checked adapter registered for ``engine``."""
    return instantiate_adapter(engine, registry.get(DESTINATION, engine))


@dataclass(frozen=True)
class ResolvedDestination:
    """Where a source's state lives: engine, dataset, pipeline name."""

    engine: str
    dataset: str
    pipeline_name: str


def resolve_destination(
    config: ProjectConfig, source: str, dataset_override: str | None = None
) -> ResolvedDestination:
    """Resolve a source's destination and dataset from config (raises on missing config).

    Every command that touches a source's files or tables comes through here, so the source's
    name and the dataset are checked here, the same way for all (exit 2): the name by
    :func:`dlt_ops.names.check_name`, the dataset as a SQL name (the ledger lives in it)."""
    from dlt_ops.adapters.model import check_identifier
    from dlt_ops.names import check_name

    check_name(source, subject="source")
    dataset = config.dataset_for(source, dataset_override)
    check_identifier(dataset, max_length=1024, subject="dataset")
    return ResolvedDestination(
        engine=engine_name(config.destination_for(source)),
        dataset=dataset,
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
    adapter asks for in ``dlt_setting_keys``, e.g. a warehouse's ``location``) looked up as dlt
    would."""
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
    registry: PluginRegistry,
    config: ProjectConfig,
    where: ResolvedDestination,
    *,
    read_only: bool = False,
) -> DestinationSession:
    """Connect to ``where`` through its registered adapter (``read_only``: a reader, which on
    an embedded engine never creates the database file)."""
    adapter = load_adapter(registry, where.engine)
    target = connection_target(
        config, where, read_only=read_only, setting_keys=adapter.dlt_setting_keys
    )
    return open_when_free(adapter, target)


def open_when_free(
    adapter: DestinationAdapter, target: ConnectionTarget, wait_s: float = BUSY_WAIT_S
) -> DestinationSession:
    """``DestinationSession.open``; on a single-writer engine a failed open is retried for up
    to ``wait_s`` (another process may hold the file for one write), then raised."""
    return DestinationSession(adapter, connect_when_free(adapter, target, wait_s), target.dataset)


def connect_when_free(
    adapter: DestinationAdapter, target: ConnectionTarget, wait_s: float = BUSY_WAIT_S
) -> SqlClient:
    """``adapter.connect(target)``, retried as :func:`open_when_free` describes."""
    deadline = time.monotonic() + (wait_s if adapter.capabilities.single_writer else 0.0)
    delay = 0.02
    while True:
        try:
            return adapter.connect(target)
        except Exception:
            if time.monotonic() + delay > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.25)


#: dlt-ops 0.1's derived-adapter names (docs/migrating-from-0.1.md), loaded on first use
_FROM_0_1 = frozenset({
    "derived_adapter", "derivable_destinations", "is_capability_derived",
    "register_derived_adapter", "UnderivableDestinationError",
})  # fmt: skip


def __getattr__(name: str) -> object:
    if name in _FROM_0_1:
        from dlt_ops.adapters import legacy_derived as derived

        return getattr(derived, name)
    raise AttributeError(f"module 'dlt_ops.destinations' has no attribute {name!r}")
