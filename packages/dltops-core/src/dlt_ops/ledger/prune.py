"""``runs prune``: trim every ledger the project's sources write to, once per ledger."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from dlt_ops.config import ProjectConfig
from dlt_ops.destinations import resolve_destination
from dlt_ops.errors import DltOpsError
from dlt_ops.ledger.model import summarize_error
from dlt_ops.ledger.readers import source_ledger
from dlt_ops.plugins import PluginRegistry
from dlt_ops.target.sessions import SessionPool


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
    dataset: str | None = None,
) -> list[PruneResult]:
    """Prune each distinct ledger (destination table or sink file) reachable from ``sources``
    (in ``dataset`` when given); a ledger that cannot be reached is a result with its error."""
    done: set[str] = set()
    results: list[PruneResult] = []
    with SessionPool(registry, config, read_only=dry_run) as pool:
        for source in sorted(sources):
            try:
                where = resolve_destination(config, source, dataset)
                ledger = source_ledger(registry, config, where, pool)
            except DltOpsError as exc:
                results.append(PruneResult(f"source '{source}'", error=summarize_error(exc)))
                continue
            for name, sink in ledger.with_method("prune"):
                if name == "destination":
                    label = f"{name}: {where.engine}/{where.dataset}"
                    key = f"{label}/{pool.key(where)}"
                else:
                    label = key = f"{name}: {sink.target}"
                if key in done:
                    continue
                done.add(key)
                try:
                    removed = sink.prune(older_than, dry_run=dry_run)  # type: ignore[attr-defined]
                    results.append(PruneResult(label, removed))
                except Exception as exc:  # one unreachable ledger does not stop the others
                    results.append(PruneResult(label, error=summarize_error(exc)))
    return results
