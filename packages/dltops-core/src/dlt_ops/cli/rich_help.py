"""Let typer render help and usage errors without importing rich's markdown and traceback code.

typer draws ``--help`` and usage errors with ``typer.rich_utils``, which imports
``rich.markdown`` (and with it ``markdown_it``) and ``rich.traceback`` at module level. dlt-ops
uses neither: its help is plain text in typer's default "rich" markup mode and pretty
exceptions are off. Together they are ~60 ms of every ``dlt-ops --help``.

:func:`install` puts a one-shot import hook in front of ``sys.meta_path``: while
``typer.rich_utils`` executes, the two modules are stand-ins whose classes import the real ones
on first use, and the stand-ins are gone again as soon as it has loaded. The output is
unchanged, and anything that does use markdown or tracebacks still gets the real classes.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec, PathFinder
from types import ModuleType
from typing import Any

TARGET = "typer.rich_utils"
#: module -> the one name ``typer.rich_utils`` imports from it
DEFERRED = {"rich.markdown": "Markdown", "rich.traceback": "Traceback"}


class _Deferred(type):
    """Metaclass of a stand-in class: calls and class attributes go to the real class."""

    def _real(cls) -> Any:
        return getattr(importlib.import_module(cls.__module__), cls.__name__)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls._real()(*args, **kwargs)

    def __getattr__(cls, name: str) -> Any:  # e.g. Traceback.from_exception
        return getattr(cls._real(), name)

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, cls._real())


def _stand_in(module: str, name: str) -> ModuleType:
    stand_in = ModuleType(module)
    setattr(stand_in, name, _Deferred(name, (), {"__module__": module}))
    return stand_in


class _Loader:
    """Executes ``typer.rich_utils`` with the stand-ins in ``sys.modules``, then removes them."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        placed = {m: _stand_in(m, n) for m, n in DEFERRED.items() if m not in sys.modules}
        sys.modules.update(placed)
        try:
            self.inner.exec_module(module)
        finally:
            for name, stand_in in placed.items():
                if sys.modules.get(name) is stand_in:
                    del sys.modules[name]


class _Finder:
    """Finds ``typer.rich_utils`` as usual but loads it through :class:`_Loader`; once."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != TARGET:
            return None
        uninstall()
        spec = PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader)  # type: ignore[assignment]
        return spec


_FINDER = _Finder()


def install() -> None:
    """Arm the hook (no-op when ``typer.rich_utils`` is already imported or armed)."""
    if TARGET not in sys.modules and _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def uninstall() -> None:
    """Disarm the hook."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)


def plain_metavars() -> None:
    """Usage lines name arguments the Unix way, ``SOURCE`` and ``[ROOT]``, not typer's
    ``{source}`` (braces read as an unfilled template); idempotent."""
    from typer.core import TyperArgument

    original = TyperArgument.make_metavar
    if getattr(original, "_dlt_ops", False):
        return

    def make_metavar(self: TyperArgument, ctx: Any, *, usage: bool = False) -> str:
        var = original(self, ctx, usage=usage)
        if usage and var.startswith("{") and "}" in var:
            inner, rest = var[1:].split("}", 1)
            return inner.upper() + rest
        if usage and var.startswith("[") and "]" in var:
            inner, rest = var[1:].split("]", 1)
            return f"[{inner.upper()}]{rest}"
        return var

    make_metavar._dlt_ops = True  # type: ignore[attr-defined]
    TyperArgument.make_metavar = make_metavar  # type: ignore[method-assign]
