"""dlt-ops: an operations layer for dlt pipelines.

The public API is re-exported lazily so ``import dlt_ops`` stays cheap (no dlt, no driver).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pluggy

    hookimpl: pluggy.HookimplMarker

__version__ = "0.1.0"

_LAZY = {
    "DltOpsError": "dlt_ops.errors",
    "ConfigError": "dlt_ops.errors",
    "PluginError": "dlt_ops.errors",
    "PluginConflictError": "dlt_ops.errors",
    "UnknownDestinationError": "dlt_ops.errors",
    "DestinationError": "dlt_ops.errors",
    "PluginRegistry": "dlt_ops.plugins",
    "DestinationAdapter": "dlt_ops.adapters",
    "Capabilities": "dlt_ops.adapters",
    "with_checkpoints": "dlt_ops.checkpoints",
    "rest_api_checkpoints": "dlt_ops.checkpoints",
    "list_checkpoints": "dlt_ops.checkpoints",
    "cleanup_checkpoints": "dlt_ops.checkpoints",
}

__all__ = ["__version__", "hookimpl", *_LAZY]


def __getattr__(name: str) -> Any:
    if name == "hookimpl":
        # ``@dlt_ops.hookimpl``, the marker for plugin hook implementations; made on first use
        # so commands that load no plugin (``--help``) never import pluggy
        import pluggy

        globals()[name] = marker = pluggy.HookimplMarker("dlt_ops")
        return marker
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'dlt_ops' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
