"""Per-invocation CLI state: global options and the lazily built plugin registry."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig
    from dlt_ops.plugins import PluginRegistry


#: ``--root`` accepted on every project command too (``dlt-ops pipeline status --root DIR``).
RootOption = Annotated[
    Path | None,
    typer.Option("--root", help="Project root (default: nearest parent with .dlt/config.toml)."),
]


def _looks_like_root(name: str) -> bool:
    path = Path(name).expanduser()
    pathlike = name in (".", "..") or "/" in name or os.sep in name or name.startswith("~")
    try:
        return path.is_dir() and (pathlike or (path / ".dlt" / "config.toml").is_file())
    except OSError:  # too long to be a path (or a loop): the name check says what is wrong
        return False


def not_a_directory(value: Any) -> Any:
    """A ``-r``/``--resource`` callback: a directory there is the old global ``-r DIR`` habit,
    refused with the new spelling instead of filtering by a resource that cannot exist (a
    ``status --fail-on failed -r .`` that matched nothing would exit 0 and never alert)."""
    for name in [value] if isinstance(value, str) else value or ():
        if _looks_like_root(name):
            raise typer.BadParameter(
                f"'{name}' is a directory, not a resource (-r is --resource); "
                f"for the project root pass --root {name}"
            )
    return value


@dataclass
class AppState:
    """What the top-level callback parsed; commands read it from ``ctx.obj``."""

    root: Path | None = None
    debug: bool = False
    _config: ProjectConfig | None = field(default=None, repr=False)
    _registry: PluginRegistry | None = field(default=None, repr=False)

    def with_root(self, root: Path | None) -> AppState:
        """Apply a command-level ``--root`` (it wins over the global one)."""
        if root is not None:
            self.root, self._config, self._registry = root, None, None
        return self

    def project(self) -> ProjectConfig:
        """The project's config (root from ``--root`` or the nearest parent of the cwd)."""
        if self._config is None:
            from dlt_ops.config import find_project_root, load_project_config

            self._config = load_project_config(find_project_root(self.root))
        return self._config

    def registry(self, *, use_project: bool = True) -> PluginRegistry:
        """The plugin registry; in a project, with its ``[dlt_ops.plugins]`` picks and its
        ``derived_adapters``."""
        if self._registry is None:
            if use_project:
                from dlt_ops.destinations import project_registry

                self._registry = project_registry(self.project())
            else:
                from dlt_ops.plugins import PluginRegistry

                self._registry = PluginRegistry()
        return self._registry
