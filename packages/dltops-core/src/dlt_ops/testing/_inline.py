"""An inline plugin module registering one object, for the kits' registration checks."""

from __future__ import annotations

import types
from typing import Any

from dlt_ops.plugins.kinds import KIND_HOOKS


def inline_plugin(kind: str, obj: object, name: str) -> types.ModuleType:
    """A module whose ``kind`` registration hook registers ``obj`` under ``name``."""
    from dlt_ops import hookimpl

    hook = KIND_HOOKS[kind]
    module = types.ModuleType(f"kit_{kind}_{name.replace('-', '_')}")

    def register_one(register: Any) -> None:
        register(obj, name=name)

    register_one.__name__ = hook
    setattr(module, hook, hookimpl(register_one))
    return module


def inline_registry(kind: str, obj: object, name: str) -> Any:
    """A registry holding only :func:`inline_plugin` ``(kind, obj, name)``."""
    from dlt_ops.plugins import PluginRegistry

    registry = PluginRegistry(entry_points=[])
    registry.add_plugin(inline_plugin(kind, obj, name), name=name, kind=kind)
    return registry
