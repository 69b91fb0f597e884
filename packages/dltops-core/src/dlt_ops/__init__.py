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
#: dlt-ops 0.1's top-level names that have an equivalent here: name -> (module, attribute).
#: docs/migrating-from-0.1.md says what each became and lists the ones dropped.
_FROM_0_1 = {
    "AlertSink": ("dlt_ops.alerts.model", "AlertSink"),
    "AssertionContext": ("dlt_ops.assertions.model", "AssertionContext"),
    "AssertionFailedError": ("dlt_ops.errors", "AssertionFailedError"),
    "AssertionType": ("dlt_ops.assertions.model", "AssertionType"),
    "DriftFinding": ("dlt_ops.reconcile.model", "DriftFinding"),
    "ReconcileResult": ("dlt_ops.reconcile.model", "SourceReport"),
    "RuleSpec": ("dlt_ops.compat.validators", "RuleSpec"),
    "Schedule": ("dlt_ops.config.schema", "Schedule"),
    "SecretBackend": ("dlt_ops.secrets", "SecretBackend"),
    "SourceConfig": ("dlt_ops.config.loader", "SourceConfig"),
    "SourceInfo": ("dlt_ops.project.model", "SourceInfo"),
    "ValidationContext": ("dlt_ops.validate.framework", "ValidationContext"),
    "ValidationError": ("dlt_ops.validate.framework", "Finding"),
    "Validator": ("dlt_ops.validate.framework", "ValidationRule"),
    "detect_removal": ("dlt_ops.compat.api", "detect_removal"),
    "discover_sources": ("dlt_ops.compat.api", "discover_sources"),
    "drop_unknown_nulls": ("dlt_ops.pydantic_fields", "drop_unknown_nulls"),
    "extract_model_column_names": ("dlt_ops.pydantic_fields", "extract_model_column_names"),
    "reconcile_all": ("dlt_ops.compat.api", "reconcile_all"),
    "reconcile_source": ("dlt_ops.compat.api", "reconcile_source"),
    "validate_sources": ("dlt_ops.compat.api", "validate_sources"),
}

__all__ = ["__version__", "hookimpl", *_LAZY, *_FROM_0_1]


def __getattr__(name: str) -> Any:
    if name == "hookimpl":
        # ``@dlt_ops.hookimpl``, the marker for plugin hook implementations; made on first use
        # so commands that load no plugin (``--help``) never import pluggy
        import pluggy

        globals()[name] = marker = pluggy.HookimplMarker("dlt_ops")
        return marker
    module, attribute = _LAZY.get(name), name
    if module is None and name in _FROM_0_1:
        module, attribute = _FROM_0_1[name]
    if module is None:
        raise AttributeError(f"module 'dlt_ops' has no attribute {name!r}")
    value = getattr(import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The lazy names too, so ``dir(dlt_ops)`` and completion list the whole API (0.1 did)."""
    return sorted(set(globals()) | set(__all__))
