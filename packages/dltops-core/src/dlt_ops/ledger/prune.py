"""``runs prune``: trim every ledger the project's sources write to, once per ledger."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from dlt_ops.config import ProjectConfig
from dlt_ops.destinations import resolve_destination
from dlt_ops.errors import DltOpsError
from dlt_ops.ledger.build import build_sinks
from dlt_ops.ledger.model import summarize_error
from dlt_ops.ledger.status import _Sessions
from dlt_ops.plugins import PluginRegistry


@dataclass
class PruneResult:
    """Rows removed (or that would be) from one ledger, or why it could not be read."""

    ledger: str
    rows: int = 0
    error: str | None = None


def prune_ledgers(
    registry: PluginRegistry,
    config: ProjectConfig,
    sources: list[str],
    older_than: datetime,
    *,
    dry_run: bool,
) -> list[PruneResult]:
    """Prune each distinct ledger (destination table or sink file) reachable from ``sources``."""
    sessions = _Sessions(registry, config, read_only=dry_run)
    done: set[str] = set()
    results: list[PruneResult] = []
    try:
        for source in sorted(sources):
            try:
                where = resolve_destination(config, source)
            except DltOpsError:
                continue  # nothing is recorded for a source that cannot resolve
            full_tier = registry.has("destination", where.engine)
            sinks = build_sinks(
                registry,
                config,
                engine=where.engine,
                dataset=where.dataset,
                full_tier=full_tier,
                open_session=lambda w=where: sessions.get(w),
                names=tuple(n for n in config.ledger_sinks if n != "destination" or full_tier),
            )
            for name, sink in sinks:
                label = (
                    f"{name}: {where.engine}/{where.dataset}"
                    if name == "destination"
                    else (f"{name}: {sink.target}")
                )
                key = label if name != "destination" else f"{label}/{sessions.key(where)}"
                if key in done or not callable(getattr(sink, "prune", None)):
                    continue
                done.add(key)
                try:
                    results.append(PruneResult(label, sink.prune(older_than, dry_run=dry_run)))  # type: ignore[attr-defined]
                except Exception as exc:  # one unreachable ledger does not stop the others
                    results.append(PruneResult(label, error=summarize_error(exc)))
    finally:
        sessions.close()
    return results
