"""Calling the observer hooks (``dlt_ops_run_started``, ``dlt_ops_run_finished``), isolated.

Lifecycle plugins (entry-point group ``dlt_ops.lifecycle``) are loaded when a run is prepared
(:func:`dlt_ops.runner.prepare.prepare_hooks`, where the prepare-time hooks may refuse the run).
Hook implementations in plugins loaded for another kind (an adapter, a ledger or alert sink)
take part too.

pluggy stops a hook call at the first exception, so observers are called one plugin at a time:
a raising observer is logged at ERROR and never reaches the run, its outcome or the next
observer. A plugin's observer is time-bounded as the sinks are (:mod:`dlt_ops.plugins.bound`,
``[dlt_ops.lifecycle] call_timeout_s``, default :data:`OBSERVER_TIMEOUT_S`): one that hangs is
logged as timed out and the run goes on. The
built-in observers (``dlt_ops.builtin``: alerts, receipts, lineage) are not wrapped: each call
they make into a plugin or the destination is bounded on its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

from dlt_ops.log import get_logger
from dlt_ops.plugins.bound import DEFAULT_S, Bound, call_timeout
from dlt_ops.redact import redact

if TYPE_CHECKING:
    from pluggy import HookCaller

    from dlt_ops.config import ProjectConfig
    from dlt_ops.ledger import RunRecord
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.runner.model import RunContext, RunOutcome

log = get_logger(__name__)

#: The most one plugin's lifecycle hook call may take unless ``[dlt_ops.lifecycle]
#: call_timeout_s`` says otherwise (the sinks' default).
OBSERVER_TIMEOUT_S = DEFAULT_S
_BUILTIN = "dlt_ops.builtin."


def one_by_one(registry: PluginRegistry, hook: str) -> Iterator[tuple[str, HookCaller]]:
    """``(plugin name, caller of that plugin's implementation alone)`` per implementation."""
    pm = registry.pm
    for impl in getattr(pm.hook, hook).get_hookimpls():
        others = [p for p in pm.get_plugins() if p is not impl.plugin]
        yield impl.plugin_name, pm.subset_hook_caller(hook, remove_plugins=others)


def lifecycle_call_timeout(config: ProjectConfig) -> float:
    """The bound on each lifecycle hook call of a plugin: ``[dlt_ops.lifecycle] call_timeout_s``
    (default :data:`OBSERVER_TIMEOUT_S`; a bad value is a ``ConfigError``)."""
    options = config.lifecycle if isinstance(config.lifecycle, dict) else {}
    return call_timeout(options, table="[dlt_ops.lifecycle]")


def _observe(registry: PluginRegistry, hook: str, config: ProjectConfig, **kwargs: Any) -> None:
    builtin = _builtin_plugins(registry, hook)
    seconds = lifecycle_call_timeout(config)
    for plugin, call in one_by_one(registry, hook):
        try:
            if plugin in builtin:
                call(**kwargs)
            else:
                Bound(f"lifecycle '{plugin}'", seconds).read(hook, partial(call, **kwargs))
        except Exception as exc:  # an observer never changes the run or stops another
            log.error(
                "run.observer_failed",
                hook=hook,
                plugin=plugin,
                error=redact(f"{type(exc).__name__}: {exc}"),
            )


def _builtin_plugins(registry: PluginRegistry, hook: str) -> set[str]:
    impls = getattr(registry.pm.hook, hook).get_hookimpls()
    return {i.plugin_name for i in impls if getattr(i.plugin, "__name__", "").startswith(_BUILTIN)}


def run_started(run: RunContext, record: RunRecord) -> None:
    """``dlt_ops_run_started`` on every observer, each isolated."""
    _observe(run.registry, "dlt_ops_run_started", run.config, run=run, record=record)


def run_finished(run: RunContext, outcome: RunOutcome) -> None:
    """``dlt_ops_run_finished`` on every observer, each isolated."""
    _observe(run.registry, "dlt_ops_run_finished", run.config, run=run, outcome=outcome)
