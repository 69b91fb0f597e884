"""Building a run's (or a reader's) ledger sinks from config and the plugin registry."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from dlt_ops.ledger.sinks import LEDGER_SINK, LedgerSink, LedgerSinkContext
from dlt_ops.log import get_logger
from dlt_ops.redact import redact

if TYPE_CHECKING:
    from dlt_ops.adapters import DestinationSession
    from dlt_ops.config import ProjectConfig
    from dlt_ops.plugins import PluginRegistry

log = get_logger(__name__)


def build_sinks(
    registry: PluginRegistry,
    config: ProjectConfig,
    *,
    engine: str,
    dataset: str,
    full_tier: bool,
    open_session: Callable[[], DestinationSession],
    names: tuple[str, ...] | None = None,
) -> list[tuple[str, LedgerSink]]:
    """Instantiate every configured sink; one that cannot be built is logged and left out."""
    sinks: list[tuple[str, LedgerSink]] = []
    for name in names if names is not None else config.ledger_sinks:
        options = config.ledger_sink.get(name, {})
        context = LedgerSinkContext(
            name=name,
            project_root=config.root,
            engine=engine,
            dataset=dataset,
            full_tier=full_tier,
            open_session=open_session,
            options=options if isinstance(options, dict) else {},
        )
        try:
            sinks.append((name, registry.get(LEDGER_SINK, name)(context)))
        except Exception as exc:  # a broken sink is observability lost, not a failed run
            log.error(
                "ledger.sink_unavailable",
                sink=name,
                error=redact(f"{type(exc).__name__}: {exc}"),
            )
    return sinks
