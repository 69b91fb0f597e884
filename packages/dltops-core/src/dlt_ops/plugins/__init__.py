"""The plugin system: kinds and the manager (:class:`PluginRegistry`).

* :mod:`dlt_ops.plugins.kinds`: kind names, their registration hooks, ``Register[T]``.
* :mod:`dlt_ops.plugins.manager`: loading entry points lazily and in isolation, lookups.

The plugin-facing protocols and typed kind keys are collected one layer up, in
:mod:`dlt_ops.plugin_api`: that module imports every feature's contract, so it stands above the
features, while this package stands below them (every feature registers through it).

A registry is a plain object: build one per command (or per test); there is no global state.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from dlt_ops.plugins.kinds import GROUP_PREFIX, KIND_HOOKS, KINDS, Kind, Register

if TYPE_CHECKING:
    from dlt_ops import hookimpl
    from dlt_ops.plugins.manager import (
        PluginFailure,
        PluginRegistry,
        PluginSource,
        Registration,
        RejectedRegistration,
        installed_entry_points,
    )

# The manager (and pluggy) load on first use: `dlt-ops --help` reads plugin commands' names
# through this package's metadata reader without importing pluggy.
_MANAGER = {"PluginFailure", "PluginRegistry", "PluginSource", "Registration",
            "RejectedRegistration", "installed_entry_points"}  # fmt: skip


def __getattr__(name: str) -> Any:
    if name == "hookimpl":
        import dlt_ops

        return dlt_ops.hookimpl
    if name in _MANAGER:
        value = getattr(import_module("dlt_ops.plugins.manager"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'dlt_ops.plugins' has no attribute {name!r}")


__all__ = [
    "GROUP_PREFIX",
    "KINDS",
    "KIND_HOOKS",
    "Kind",
    "PluginFailure",
    "PluginRegistry",
    "PluginSource",
    "Register",
    "Registration",
    "RejectedRegistration",
    "hookimpl",
    "installed_entry_points",
]
