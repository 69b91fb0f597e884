"""How a derived adapter's plugin is labelled, apart from :mod:`dlt_ops.adapters.derived` so
that telling adapter tiers apart (``status``, ``plugins list``) does not import that module."""

from __future__ import annotations

#: ``PluginSource.value`` of a derived adapter's plugin is ``<this>[<engine>]``.
DERIVED_PLUGIN_PREFIX = "dlt_ops.adapters.derived"


def plugin_value(engine: str) -> str:
    """The plugin module label a derived adapter for ``engine`` is registered under."""
    return f"{DERIVED_PLUGIN_PREFIX}[{engine}]"


def is_derived(plugin_module: str) -> bool:
    """Whether a plugin source (its module label) is a derived adapter."""
    return plugin_module.startswith(DERIVED_PLUGIN_PREFIX + "[")
