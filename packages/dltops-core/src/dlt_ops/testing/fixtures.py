"""pytest fixtures for dlt-ops and plugin test suites.

Opt in from a ``conftest.py``: ``pytest_plugins = ["dlt_ops.testing.fixtures"]``.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from dlt_ops.plugins import PluginRegistry


@pytest.fixture
def plugin_registry() -> Callable[..., PluginRegistry]:
    """Build a fresh registry holding only inline plugins.

    Call it as ``plugin_registry(("destination", "x", module))``.

    Each item is ``(kind, name, module_or_object)``; no installed entry point is read, so a
    test sees exactly the plugins it names. Pass ``entry_points=[...]`` to add metadata-level
    entry points as well.
    """

    def build(
        *plugins: tuple[str, str, ModuleType | Any],
        entry_points: list[Any] | None = None,
        picks: dict[str, dict[str, str]] | None = None,
    ) -> PluginRegistry:
        registry = PluginRegistry(entry_points=entry_points or [], picks=picks)
        for kind, name, module in plugins:
            registry.add_plugin(module, name=name, kind=kind)
        return registry

    return build
