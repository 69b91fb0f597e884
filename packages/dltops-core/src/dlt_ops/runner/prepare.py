"""``prepare_run``: everything a run resolves before writing anything, done once.

A ``pipeline run`` prepares once; a backfill prepares once for the whole command and every
chunk reuses it. Every failure here raises before the ledger's start row (there is nowhere to
record it): an unknown source or resource is a usage error, an unresolvable destination, a
dataset no adapter could quote, or a ledger or alert sink nobody registers is a configuration
error (exit 2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dlt_ops.adapters import check_identifier
from dlt_ops.destinations import resolve_destination
from dlt_ops.runner.lifecycle import prepare_hooks
from dlt_ops.runner.model import PreparedRun

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig
    from dlt_ops.plugins import PluginRegistry


def check_ledger_sinks(registry: PluginRegistry, config: ProjectConfig) -> None:
    """Every name in ``[dlt_ops] ledger_sinks`` is registered and loads (raises
    ``UnknownPluginError`` / ``PluginLoadError``, exit 2): a misspelled sink would otherwise
    lose the ledger silently."""
    for name in config.ledger_sinks:
        registry.get("ledger_sink", name)


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
    from dlt_ops.project.discovery import discover

    project = discover(config.root)
    project.source(source)  # unknown source: a usage error before any row
    where = resolve_destination(config, source, dataset)
    # the ledger, receipts and state tables live in this dataset: refuse a name no adapter
    # could quote before anything is written (exit 2), rather than lose the ledger silently
    check_identifier(where.dataset, max_length=1024, subject="dataset")
    registry.get("trigger_emitter", trigger_source)  # must be registered
    check_ledger_sinks(registry, config)
    prepared = PreparedRun(
        config=config,
        registry=registry,
        project=project,
        source=source,
        resources=resources,
        where=where,
        full_tier=registry.has("destination", where.engine),
    )
    prepared.gate_factories = prepare_hooks(registry, prepared)
    return prepared
