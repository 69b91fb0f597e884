"""The plugin system: kinds and the manager (:class:`PluginRegistry`).

* :mod:`dlt_ops.plugins.kinds`: kind names, their registration hooks, ``Register[T]``.
* :mod:`dlt_ops.plugins.manager`: loading entry points lazily and in isolation, lookups.

The plugin-facing protocols and typed kind keys are collected one layer up, in
:mod:`dlt_ops.plugin_api`: that module imports every feature's contract, so it stands above the
features, while this package stands below them (every feature registers through it).

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
