"""``prepare_run``: everything a run resolves before writing anything, done once.

A ``pipeline run`` prepares once; a backfill prepares once for the whole command and every
chunk reuses it. Every failure here raises before the ledger's start row (there is nowhere to
record it): an unknown source or resource is a usage error, an unresolvable destination, a
dataset no adapter could quote, or a ledger or alert sink nobody registers is a configuration
error (exit 2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING

from dlt_ops.adapters import check_identifier
from dlt_ops.runner.refusals import check_before_start, refused_before_start
from dlt_ops.target import resolve_target

if TYPE_CHECKING:
    from dlt.extract.source import DltSource

    from dlt_ops.config import ProjectConfig
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.project import Project
    from dlt_ops.project.introspect import Introspection
    from dlt_ops.runner.model import GateFactory
    from dlt_ops.target import Target

#: The plugin kind whose plugins are all loaded for every run (entry-point group
#: ``dlt_ops.lifecycle``).
LIFECYCLE_KIND = "lifecycle"


@dataclass
class PreparedRun:
    """Everything resolved once for one source and dataset, before anything is written.

    The source module is imported lazily, once (:meth:`loaded`): a plain run imports it inside
    its ledger bookkeeping, so an import failure still ends a ledger row; a backfill imports it
    up front in its entry checks and every chunk reuses it.
    """

    config: ProjectConfig
    registry: PluginRegistry
    project: Project
    source: str
    resources: tuple[str, ...]
    #: where the source's tables live: engine, dataset, database, tier, capabilities
    target: Target
    #: One factory per plugin that contributes an extract gate (``dlt_ops_extract_gates``).
    gate_factories: tuple[GateFactory, ...] = ()
    _loaded: Introspection | None = field(default=None, repr=False)
    _facts_refreshed: bool = field(default=False, repr=False)

    @property
    def where(self) -> Target:
        """The :attr:`target` (its older name; engine, dataset and pipeline name)."""
        return self.target

    @property
    def full_tier(self) -> bool:
        """Whether the destination has an adapter (``target.has_adapter``)."""
        return self.target.has_adapter

    @property
    def pipeline_name(self) -> str:
        """dlt pipeline name of the source."""
        return self.target.pipeline_name

    def loaded(self) -> Introspection:
        """The sandbox-checked, imported source module (imported on first call only)."""
        if self._loaded is None:
            from dlt_ops.project.introspect import load_source

            self._loaded = load_source(self.project, self.config, self.source)
        return self._loaded

    def instantiate(self) -> DltSource:
        """A fresh ``DltSource`` with the requested resources selected."""
        from dlt_ops.errors import UnknownResourceError

        source_fn = self.loaded().source_fn
        assert source_fn is not None  # load_source raises when the module has no source
        source: DltSource = source_fn()
        if not self._facts_refreshed:  # once per prepared run (a backfill's chunks share it)
            from dlt_ops.project.facts_cache import remember_live_facts

            self._facts_refreshed = True
            remember_live_facts(self.project, self.loaded().info, source)
        from dlt_ops.runner.bad_files import guard_file_readers

        policy = self.config.source(self.source).on_bad_file
        guard_file_readers(source, self.source, policy, self.config.root)
        if not self.resources:
            return source
        known = list(source.resources.keys())
        unknown = [r for r in self.resources if r not in known]
        if unknown:
            raise UnknownResourceError(self.source, unknown, known)
        return source.with_resources(*self.resources)


def prepare_hooks(registry: PluginRegistry, prepared: PreparedRun) -> tuple[GateFactory, ...]:
    """Load the lifecycle plugins, let each check the prepared run (raising refuses it), and
    collect the gate factories they contribute. A lifecycle plugin (or secret backend) that
    cannot load refuses the run (fail closed: it may be the guard that would refuse it)."""
    from dlt_ops.plugins.run_kinds import require_run_plugins

    require_run_plugins(registry)  # loads every lifecycle plugin
    _ask_each_to_prepare(registry, prepared)
    factories = registry.pm.hook.dlt_ops_extract_gates(prepared=prepared)
    return tuple(reversed(factories))  # pluggy answers last-registered first


def _ask_each_to_prepare(registry: PluginRegistry, prepared: PreparedRun) -> None:
    """``dlt_ops_prepare_run`` on each plugin in turn; a raise refuses the run with exit 2, as
    every refusal before the start row does. A ``DltOpsError`` keeps its own words; anything
    else is named with the plugin that raised it."""
    from dlt_ops.errors import DltOpsError, RunRefusedError
    from dlt_ops.plugins.bound import Bound
    from dlt_ops.runner.lifecycle import lifecycle_call_timeout, one_by_one

    seconds = lifecycle_call_timeout(prepared.config)
    for plugin, call in one_by_one(registry, "dlt_ops_prepare_run"):
        try:  # a check that never answers refuses the run: it may be the guard that would
            label = f"lifecycle '{_plugin_label(plugin)}'"
            Bound(label, seconds).read("dlt_ops_prepare_run", partial(call, prepared=prepared))
        except DltOpsError as exc:
            exc.exit_code = 2  # nothing was written: a refusal, not a failed run
            raise
        except Exception as exc:
            raise RunRefusedError(_plugin_label(plugin), prepared.source, exc) from exc


def _plugin_label(registered_as: str) -> str:
    """``freeze-guard 0.0.1 (freeze_plugin)`` from pluggy's name for the plugin (the origin, then
    ``:<kind>``)."""
    origin, _, _kind = registered_as.rpartition(":")
    return origin or registered_as


def check_ledger_sinks(registry: PluginRegistry, config: ProjectConfig) -> None:
    """Every name in ``[dlt_ops] ledger_sinks`` is registered and loads (raises
    ``UnknownPluginError`` / ``PluginLoadError``, exit 2): a misspelled sink would otherwise
    lose the ledger silently. Each sink's ``call_timeout_s`` must be valid too (``ConfigError``)."""
    from dlt_ops.ledger.build import ledger_call_timeout

    for name in config.ledger_sinks:
        registry.get("ledger_sink", name)
        ledger_call_timeout(config, name)


def prepare_run(
    registry: PluginRegistry,
    config: ProjectConfig,
    source: str,
    *,
    resources: tuple[str, ...] = (),
    dataset: str | None = None,
    trigger_source: str = "cli",
) -> PreparedRun:
    """Resolve ``source`` for running; let lifecycle plugins check it and contribute gates."""
    from dlt_ops.config.secret_values import harvest_project_secrets
    from dlt_ops.project.discovery import discover
    from dlt_ops.project.links import check_links
    from dlt_ops.secrets import engage_destination_secrets

    # before any plugin hook: masked even if this config did not come from load_project_config
    harvest_project_secrets(config.root, config.raw)
    project = discover(config.root)
    info = project.source(source)  # unknown source: a usage error before any row
    check_links(config.root, info.pipeline_dir, source=source)  # a symlink loop: exit 2
    target = resolve_target(registry, config, source, dataset)
    # the ledger, receipts and state tables live in this dataset: refuse a name no adapter
    # could quote before anything is written (exit 2), rather than lose the ledger silently
    longest = target.capabilities.max_identifier_length if target.capabilities else 1024
    check_identifier(target.dataset, max_length=longest, subject="dataset")
    registry.get("trigger_emitter", trigger_source)  # must be registered
    check_ledger_sinks(registry, config)
    check_before_start(registry, config, project, target, source, resources)
    with refused_before_start():  # e.g. a missing Airflow Connection
        engage_destination_secrets(config, registry, source)
    prepared = PreparedRun(
        config=config,
        registry=registry,
        project=project,
        source=source,
        resources=resources,
        target=target,
    )
    with refused_before_start():  # e.g. an assertion config that does not parse
        prepared.gate_factories = prepare_hooks(registry, prepared)
    return prepared
