"""Building a run's (or a reader's) ledger sinks from config and the plugin registry."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from dlt_ops.ledger.bounded import bounded_sink
from dlt_ops.ledger.sinks import LEDGER_SINK, LedgerSink, LedgerSinkContext
from dlt_ops.log import get_logger
from dlt_ops.plugins.bound import sink_call_timeout
from dlt_ops.redact import redact

if TYPE_CHECKING:
    from dlt_ops.adapters import DestinationSession
    from dlt_ops.config import ProjectConfig
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.target import Target

log = get_logger(__name__)

#: The built-in sink that keeps ``_dlt_ops_runs`` in the run's own destination.
DESTINATION_SINK = "destination"


def ledger_call_timeout(config: ProjectConfig, name: str) -> float:
    """Sink ``name``'s bound, ``[dlt_ops.ledger_sink.<name>] call_timeout_s`` (``ConfigError``
    when it is not a number in (0, 600])."""
    return sink_call_timeout(config.ledger_sink, "ledger_sink", name)


def build_sinks(
    registry: PluginRegistry,
    config: ProjectConfig,
    target: Target,
    *,
    open_session: Callable[[], DestinationSession],
    reading: bool = False,
) -> list[tuple[str, LedgerSink]]:
    """Instantiate every configured sink for ``target``; one that cannot be built is logged and
    left out. The ``destination`` sink is left out where the destination has no adapter (core
    tier): there is no table to write, read or close abandoned rows in. A run says so once;
    a reader (``reading``) skips it without a word."""
    sinks: list[tuple[str, LedgerSink]] = []
    for name in config.ledger_sinks:
        if name == DESTINATION_SINK and not target.has_adapter:
            if not reading:
                log.info(
                    f"runs ledger skipped: destination '{target.engine}' has no "
                    "DestinationAdapter (core mode)"
                )
            continue
        options = config.ledger_sink.get(name, {})
        context = LedgerSinkContext(
            name=name,
            project_root=config.root,
            engine=target.engine,
            dataset=target.dataset,
            full_tier=target.has_adapter,
            open_session=open_session,
            options=options if isinstance(options, dict) else {},
        )
        try:
            sink = registry.get(LEDGER_SINK, name)(context)
            if not reading:  # a writer's every call is bounded: a hung sink never stalls it
                sink = bounded_sink(name, sink, ledger_call_timeout(config, name))
            sinks.append((name, sink))
        except Exception as exc:  # a broken sink is observability lost, not a failed run
            log.error(
                "ledger.sink_unavailable",
                sink=name,
                error=redact(f"{type(exc).__name__}: {exc}"),
            )
    return sinks
