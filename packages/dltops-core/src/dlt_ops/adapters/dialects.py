"""Per-dialect adapters: a plugin may claim one dialect of a multi-dialect dlt destination.

dlt's ``sqlalchemy`` destination speaks whatever dialect its credentials name. An adapter
registered as ``sqlalchemy+sqlite`` (entry point of the same name) serves the projects whose
``sqlalchemy`` credentials are a ``sqlite://`` URL: :func:`add_dialect_adapters` registers it
under the engine's own name for them. Other dialects are left alone (the derived path of
``[dlt_ops] derived_adapters``, or core tier).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from dlt_ops import hookimpl

if TYPE_CHECKING:
    from dlt_ops.plugins import PluginRegistry

#: ``PluginSource.value`` of an alias is ``<this>[<engine>+<dialect>]``.
ALIAS_PREFIX = "dlt_ops.adapters.dialects"


def dialect_of(credentials: Any) -> str | None:
    """The SQL dialect credentials name: a URL's scheme without its driver
    (``postgresql+psycopg2://`` -> ``postgresql``), a mapping's ``drivername`` likewise."""
    if isinstance(credentials, dict):
        credentials = credentials.get("drivername")
        if not isinstance(credentials, str):
            return None
        credentials += "://"
    if not isinstance(credentials, str) or "://" not in credentials:
        return None
    scheme = credentials.split("://", 1)[0].split("+", 1)[0].strip().lower()
    return scheme or None


class _DialectAlias:
    """An inline plugin registering the ``<engine>+<dialect>`` adapter under ``<engine>``."""

    def __init__(self, engine: str, variant: str, registry: PluginRegistry) -> None:
        self.__name__ = f"{ALIAS_PREFIX}[{variant}]"
        self.engine, self.variant, self.registry = engine, variant, registry

    @hookimpl
    def dlt_ops_register_destinations(self, register: Callable[..., None]) -> None:
        variant, registry = self.variant, self.registry

        def build() -> object:
            from dlt_ops.adapters.protocol import build_registered

            return build_registered(registry.get("destination", variant))

        register(build, name=self.engine)


def add_dialect_adapters(
    registry: PluginRegistry, engines: Iterable[str], credentials: Callable[[str], Any]
) -> None:
    """For each of ``engines`` that no plugin claims by its plain name but some plugin claims
    for a dialect (``<engine>+<dialect>``), register that dialect's adapter as ``engine`` when
    ``credentials(engine)`` names that dialect. Reads metadata only until a dialect matches."""
    installed = {s.name for s in registry.sources("destination")}
    for engine in dict.fromkeys(engines):
        if engine in installed or not any(n.startswith(engine + "+") for n in installed):
            continue
        variant = f"{engine}+{dialect_of(credentials(engine))}"
        if variant in installed:
            registry.add_plugin(
                _DialectAlias(engine, variant, registry), name=engine, kind="destination"
            )
