"""The plugin kinds every run loads in full, and the fail-closed check over them.

A run loads every ``lifecycle`` plugin (any of them may refuse the run in
``dlt_ops_prepare_run``, a change freeze say) and asks every ``secret_backend`` whether it
serves the source. If one of those cannot load, or implements a hook that would never be called,
the run cannot know what it would have said, so no run or backfill starts: the plugin is fixed,
reinstalled or turned off explicitly (``[dlt_ops.plugins] disable``). Plugins looked up by name
(an adapter, a ledger or alert sink) fail the command that needs them already.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dlt_ops.errors import RunPluginLoadError

if TYPE_CHECKING:
    from dlt_ops.plugins.manager import PluginFailure, PluginRegistry

#: Kinds a run loads unconditionally, all of their plugins.
RUN_KINDS: tuple[str, ...] = ("lifecycle", "secret_backend")


def run_plugin_problems(registry: PluginRegistry) -> list[PluginFailure]:
    """Load every plugin of :data:`RUN_KINDS`; those that failed or have an ignored hook."""
    for kind in RUN_KINDS:
        registry.load_all(kind)
    return [problem for kind in RUN_KINDS for problem in registry.load_problems(kind)]


def require_run_plugins(registry: PluginRegistry) -> None:
    """Raise :class:`RunPluginLoadError` (exit 2) naming every such plugin, its distribution
    and its error; load them all otherwise."""
    problems = run_plugin_problems(registry)
    if problems:
        raise RunPluginLoadError(
            [(p.source.kind, p.source.name, p.source.origin, p.error) for p in problems]
        )
