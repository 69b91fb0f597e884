"""Commands that plugins add (plugin kind ``command``, entry-point group ``dlt_ops.command``).

``dlt-ops --help`` lists them from the installed metadata alone: the entry-point name is the
command name, and neither the plugin nor pluggy is imported for a listing. The plugin is
loaded (through the plugin registry, with its usual failure, disable and pick handling) only
when its command runs or its own ``--help`` is asked for. A plugin command never replaces a
built-in one: such an entry point is left out here, and ``plugins doctor`` reports it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

GROUP = "dlt_ops.command"
KIND = "command"


@dataclass(frozen=True)
class PluginCommand:
    """A command name some installed plugin(s) provide."""

    name: str
    distributions: tuple[str, ...]

    @property
    def summary(self) -> str:
        """What the root help shows without importing the plugin."""
        return f"A command of the {' / '.join(self.distributions)} plugin."


def _found() -> list[tuple[str, str, str | None]]:
    """``(name, value, distribution)`` of every ``dlt_ops.command`` entry point."""
    from dlt_ops.plugins.entry_points import in_group

    return in_group(GROUP)


def installed_commands(builtin: Iterable[str]) -> list[PluginCommand]:
    """Plugin commands to list: not a built-in name, not turned off by
    ``DLT_OPS_DISABLE_PLUGINS`` (a project's ``disable`` list applies when one runs)."""
    from dlt_ops.errors import ConfigError
    from dlt_ops.plugins import disable

    try:
        off = disable.from_environment()
    except ConfigError:  # reported by whatever command loads plugins
        off = ()
    reserved = set(builtin)
    by_name: dict[str, list[str]] = {}
    for name, value, dist in _found():
        if name in reserved or any(d.matches(KIND, name) for d in off):
            continue
        by_name.setdefault(name, []).append(dist or value)
    return [PluginCommand(n, tuple(dict.fromkeys(d))) for n, d in sorted(by_name.items())]


def _project_plugin_settings() -> tuple[dict[str, dict[str, str]], list[str]]:
    """``[dlt_ops.plugins]`` picks and ``disable`` list of the project at or above the current
    directory (none outside a project): the command's own ``--root`` is not parsed yet."""
    from dlt_ops.config import find_project_root
    from dlt_ops.config.root import CONFIG_RELPATH
    from dlt_ops.config.toml import read_toml
    from dlt_ops.errors import ConfigError

    try:
        raw = read_toml(find_project_root() / CONFIG_RELPATH)
    except ConfigError:
        return {}, []
    table = raw.get("dlt_ops")
    plugins = table.get("plugins") if isinstance(table, dict) else None
    if not isinstance(plugins, dict):
        return {}, []
    picks = {k: dict(v) for k, v in plugins.items() if isinstance(v, dict)}
    from dlt_ops.plugins.disable import entry_problem

    off = plugins.get("disable", [])
    valid = [e for e in off if isinstance(e, str) and entry_problem(e) is None]
    return picks, valid if isinstance(off, list) else []


def load_command(name: str) -> Any:
    """The typer app or function the plugin registered as ``name`` (raises the registry's
    ``PluginLoadError``, ``PluginDisabledError`` or ``PluginConflictError``: exit 2)."""
    from dlt_ops.plugins import PluginRegistry

    picks, off = _project_plugin_settings()
    return PluginRegistry(picks=picks, disable=off).get(KIND, name)
