"""Importing project modules without touching ``sys.path``, and pointing dlt at the project.

Source modules load as ``<ns>.<pipeline>.source.<stem>`` under a synthetic package per project
(``<ns>`` is derived from the root path, so two projects in one process never share modules).
Relative imports such as ``from ..resource.events import events`` resolve inside the pipeline
directory, and the module's last name component is its stem, which is what dlt uses as the
config section.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from dlt_ops.log import get_logger

log = get_logger(__name__)


def namespace(root: Path) -> str:
    """The synthetic top-level package name for a project root."""
    return "_dltops_project_" + hashlib.sha1(str(root).encode()).hexdigest()[:10]


def module_name(root: Path, pipeline: str, module_path: Path) -> str:
    """The import name a source module gets."""
    return f"{namespace(root)}.{pipeline}.source.{module_path.stem}"


def _package(name: str, path: Path) -> ModuleType:
    module = sys.modules.get(name)
    if module is None:
        module = ModuleType(name)
        module.__path__ = [str(path)]
        module.__package__ = name
        sys.modules[name] = module
    return module


def forget_project_modules(root: Path) -> None:
    """Drop every module imported from ``root`` so the next import reads the files afresh."""
    prefix = namespace(root)
    for name in [n for n in sys.modules if n == prefix or n.startswith(prefix + ".")]:
        del sys.modules[name]


def import_source_module(root: Path, pipeline: str, module_path: Path) -> ModuleType:
    """Import (or return the already imported) source module; exceptions propagate."""
    name = module_name(root, pipeline, module_path)
    if name in sys.modules:
        return sys.modules[name]
    top = namespace(root)
    _package(top, root)
    _package(f"{top}.{pipeline}", module_path.parent.parent)
    _package(f"{top}.{pipeline}.source", module_path.parent)
    spec = importlib.util.spec_from_file_location(name, module_path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {module_path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def use_project_dir(root: Path, *, refresh: bool = False) -> None:
    """Make dlt resolve config, secrets and relative paths from ``root``, not the cwd.

    With ``refresh``, an already loaded context re-reads its config providers, so a process
    that instantiates sources again sees the config files as they are now (validate caches
    facts under a key computed from those files)."""
    os.environ["DLT_PROJECT_DIR"] = str(root)
    if "dlt" not in sys.modules:
        return  # dlt reads DLT_PROJECT_DIR when it first builds its run context
    try:
        from dlt.common.configuration.container import Container
        from dlt.common.configuration.specs.pluggable_run_context import PluggableRunContext

        ctx = Container()[PluggableRunContext]
        if os.path.abspath(ctx.context.run_dir) != str(root):
            ctx.reload(str(root))
        elif refresh:
            ctx.reload_providers()
    except Exception as exc:  # never fatal: dlt falls back to its own resolution
        log.debug("project.run_context_reload_failed", error=str(exc))
