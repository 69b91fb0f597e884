"""Destination tier checks shared by ``validate`` and the runtime preflight."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dlt_ops.destinations import engine_name, instantiate_adapter
from dlt_ops.errors import (
    AdapterCapabilityError,
    DestinationCapabilityError,
    DestinationNotResolvableError,
    PluginError,
    PluginLoadError,
    PluginLoadFailedError,
    UnknownPluginError,
)
from dlt_ops.target import Tier, adapter_tier

if TYPE_CHECKING:
    from dlt_ops.adapters import DestinationAdapter
    from dlt_ops.config import ProjectConfig
    from dlt_ops.plugins import PluginRegistry

#: Features that need a registered DestinationAdapter (full tier), in 0.1's words and order:
#: each refuses on a core-tier destination (clean: its remote half; reconcile: its drift state).
ADAPTER_GATED_FEATURES = (
    "runs ledger and status",
    "checkpoints",
    "backfill",
    "clean (remote)",
    "reconcile",
    "assertion quarantine",
)
REQUIRE_ADAPTER = "require_destination_adapter"


@dataclass(frozen=True)
class DestinationCheck:
    """The outcome: the engine, its adapter (``None`` at core tier), and the core-mode notice."""

    destination: str
    engine: str
    adapter: DestinationAdapter | None
    #: the adapter is derived from dlt's SQL client (``[dlt_ops] derived_adapters``)
    derived: bool = False

    @property
    def tier(self) -> Tier:
        """Full with an adapter package, derived with a derived one, else core."""
        if self.adapter is None:
            return Tier.CORE
        return Tier.DERIVED if self.derived else Tier.FULL

    @property
    def notice(self) -> str | None:
        """The core-mode or derived-adapter warning, ``None`` at full tier."""
        if self.adapter is not None and self.derived:
            return (
                f"destination '{self.engine}' runs on a derived adapter built from dlt's SQL "
                f"client: untested on this engine (run dlt_ops.testing.DestinationAdapterSuite "
                f"against it to find out)"
            )
        if self.adapter is not None:
            return None
        return (
            f"destination '{self.engine}' has no registered DestinationAdapter: running in "
            f"core mode; adapter-gated features unavailable: {', '.join(ADAPTER_GATED_FEATURES)}"
        )


def engaged_by_config(config: ProjectConfig, source: str, uses_checkpoints: bool,
                      resources: Collection[str] | None = None) -> list[str]:  # fmt: skip
    """Adapter-gated features a source engages through config and code."""
    engaged = []
    if config.require_destination_adapter:
        engaged.append(REQUIRE_ADAPTER)
    if uses_checkpoints:
        engaged.append("checkpoints")
    assertions: Any = config.source(source).assertions
    for resource, table in (assertions or {}).items():
        if resources is not None and resource not in resources or not isinstance(table, dict):
            continue
        modes = [table.get("on_failure")] + [
            v.get("on_failure") for v in table.values() if isinstance(v, dict)
        ]
        modes += [c.get("on_failure") for c in table.get("custom", []) if isinstance(c, dict)]
        if "quarantine" in modes:
            engaged.append("assertion quarantine")
            break
    return engaged


def _dlt_knows(destination: str) -> str | None:
    """dlt's error when it cannot resolve ``destination``, else ``None``."""
    try:
        from dlt.common.destination import Destination

        Destination.from_reference(destination)
    except Exception as exc:
        return f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
    return None


def check_destination(
    config: ProjectConfig,
    registry: PluginRegistry,
    source: str,
    engaged: Collection[str] = (),
) -> DestinationCheck:
    """Resolve a source's destination and tier; raise when the run cannot proceed.

    Raises ``UnresolvedDestinationError`` (config), ``PluginLoadFailedError`` /
    ``AdapterCapabilityError`` for a broken adapter, ``DestinationNotResolvableError`` when dlt
    does not know the destination, and ``DestinationCapabilityError`` when there is no adapter
    but ``engaged`` names adapter-gated features.
    """
    destination = config.destination_for(source)
    engine = engine_name(destination)
    try:
        registered = registry.get("destination", engine)
    except PluginLoadError as exc:
        raise PluginLoadFailedError("destination", engine, exc.cause) from exc
    except UnknownPluginError:
        registered = None
    if registered is not None:
        try:
            adapter = instantiate_adapter(engine, registered)
        except PluginError as exc:
            raise AdapterCapabilityError(str(exc)) from exc
        derived = adapter_tier(registry, engine) is Tier.DERIVED
        return DestinationCheck(destination, engine, adapter, derived)
    problem = _dlt_knows(destination)
    if problem:
        raise DestinationNotResolvableError(
            f"destination '{destination}' (source '{source}') is not a dlt destination: "
            f"{problem}. Fix default_destination or [sources.{source}.dlt_ops].destination."
        )
    if engaged:
        raise DestinationCapabilityError(
            engine, list(engaged), ADAPTER_GATED_FEATURES, registry.names("destination")
        )
    return DestinationCheck(destination, engine, None)
