"""The plugin system: kinds, the manager (:class:`PluginRegistry`) and the plugin-facing protocols.

* :mod:`dlt_ops.plugins.kinds`: kind names, their registration hooks, ``Register[T]``.
* :mod:`dlt_ops.plugins.manager`: loading entry points lazily and in isolation, lookups.
* :mod:`dlt_ops.plugins.protocols`: every protocol a plugin implements, and the typed kind keys
  (``registry.get(LEDGER_SINK, name)``). Imported on demand: it pulls in each feature's contract.

A registry is a plain object: build one per command (or per test); there is no global state.
"""

from __future__ import annotations

from dlt_ops import hookimpl
from dlt_ops.plugins.kinds import GROUP_PREFIX, KIND_HOOKS, KINDS, Kind, Register
from dlt_ops.plugins.manager import (
    PluginFailure,
    PluginRegistry,
    PluginSource,
    Registration,
    RejectedRegistration,
    installed_entry_points,
)

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
