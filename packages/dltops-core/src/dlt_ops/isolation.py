"""Runs in processes of their own, forked from a server that has dlt imported already.

dlt keeps state at module level (its configuration container, import-time registries): two
runs in threads of one process share it, and concurrent first imports of dlt's modules can
deadlock (``_ModuleLock('dlt.common.configuration')``) or trip dlt's "Injection container should
not be initialized during initial import". So the scheduler's parallel runs and backfill's
``--workers`` each run in a process of their own.

A fresh ``python`` per run would pay dlt's imports each time (about a second on a busy 2-core
machine). Instead one *fork server* per command (``multiprocessing``'s ``forkserver`` start
method) is started from a clean interpreter, imports :data:`PRELOAD` once, and forks a child for
every run: the child starts with dlt imported, and no thread or connection of the parent is
copied into it (the server is not a fork of the parent). Where ``forkserver`` does not exist
(Windows) children are spawned.

A child gets the parent's working directory and ``sys.path`` but never imports the parent's
``__main__`` (:func:`start`); its environment is the fork server's, so callers pass
``os.environ`` along (:func:`adopt_environment`).
"""

from __future__ import annotations

import os
import sys
import threading
import types
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext
    from multiprocessing.process import BaseProcess

    from dlt_ops.plugins import PluginRegistry

#: Imported once by the fork server; every child starts with them loaded.
PRELOAD = ("dlt_ops._preload",)
#: The environment variables the server finds its engines and extra modules in (comma-separated);
#: here, not in ``_preload``, whose import would run the whole preload in the parent first.
ENGINES_ENV = "DLT_OPS_PRELOAD_ENGINES"
MODULES_ENV = "DLT_OPS_PRELOAD_MODULES"

_lock = threading.Lock()
_start_lock = threading.Lock()
_context: BaseContext | None = None


def run_context(engines: Iterable[str] = (), modules: Iterable[str] = ()) -> BaseContext:
    """The multiprocessing context runs are started from. The fork server is started on the
    first call and begins importing :data:`PRELOAD` (with dlt's client of each of ``engines``
    and ``modules``, e.g. the adapters'), so call it early: the parent works meanwhile."""
    global _context
    with _lock:
        if _context is None:
            import multiprocessing

            if "forkserver" in multiprocessing.get_all_start_methods():
                from multiprocessing import forkserver

                ctx = multiprocessing.get_context("forkserver")
                ctx.set_forkserver_preload(list(PRELOAD))
                named = {ENGINES_ENV: ",".join(sorted(set(engines))),
                         MODULES_ENV: ",".join(sorted(set(modules)))}  # fmt: skip
                saved = {k: os.environ.get(k) for k in named}
                os.environ.update(named)  # the server starts with this environment
                try:
                    forkserver.ensure_running()
                finally:
                    for key, value in saved.items():
                        if value is None:
                            os.environ.pop(key, None)
                        else:
                            os.environ[key] = value
                _context = ctx
            else:  # pragma: no cover - Windows
                _context = multiprocessing.get_context("spawn")
        return _context


def adapter_modules(registry: PluginRegistry, engines: Iterable[str]) -> list[str]:
    """The modules of the adapters of ``engines`` and the drivers they name
    (:func:`preload_of`)."""
    from dlt_ops.destinations import load_adapter

    found = []
    for engine in set(engines):
        try:
            found.extend(preload_of(load_adapter(registry, engine)))
        except Exception:  # noqa: S112 - core tier or broken: the run reports it
            continue
    return found


def preload_of(adapter: object) -> list[str]:
    """What the fork server imports for one adapter: its module, then its
    ``preload_modules`` (the driver a child would import on its first connection)."""
    hinted = getattr(adapter, "preload_modules", ())  # a hint: a structural adapter may lack it
    return [type(adapter).__module__, *(m for m in hinted if isinstance(m, str))]


def start(proc: BaseProcess) -> None:
    """``proc.start()``, without telling the child to import the parent's ``__main__`` (a CLI
    script, a test runner, an orchestrator's entry point: none of it is the child's business,
    and a script without a ``__main__`` guard would run again)."""
    with _start_lock:
        main = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            proc.start()
        finally:
            if main is not None:
                sys.modules["__main__"] = main


def adopt_environment(env: Mapping[str, str]) -> None:
    """In a child: take the parent's environment (the fork server's may be older)."""
    os.environ.clear()
    os.environ.update(env)
