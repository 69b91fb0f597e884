"""The fleet's figures as Prometheus metric families, rendered by prometheus-client.

A custom collector: every scrape (or ``dlt-ops metrics``) reads the fleet afresh and yields
one family per metric; ``generate_latest`` writes the text exposition format. Nothing here
formats exposition text by hand. Metric names and labels are documented in docs/metrics.md.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prometheus_client.core import Metric

    from dlt_ops.metrics.fleet import FleetMetrics, SourceMetrics

#: the outcomes ``dlt_ops_last_run_outcome`` has a sample for (one of them is 1)
OUTCOMES = ("completed", "failed", "running", "abandoned")
READABLE = ("ok", "missing")
#: the levels ``dlt_ops_freshness_level`` has a sample for (``dlt_ops.ledger.freshness``)
FRESHNESS_LEVELS = ("ok", "warn", "error", "unset")


def _families(fleet: FleetMetrics) -> Iterator[Metric]:
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

    def gauge(name: str, doc: str, labels: list[str]) -> GaugeMetricFamily:
        return GaugeMetricFamily(name, doc, labels=["source", *labels])

    f: dict[str, GaugeMetricFamily | CounterMetricFamily] = {
        "up": gauge("dlt_ops_ledger_up", "1 when the source's runs ledger was read (ok or "
                    "missing).", ["state"]),
        "runs": CounterMetricFamily("dlt_ops_runs", "Ledger rows (run attempts) by status.",
                                    labels=["source", "status"]),
        "start": gauge("dlt_ops_last_run_start_timestamp_seconds", "Start of the newest run.", []),
        "end": gauge("dlt_ops_last_run_end_timestamp_seconds", "End of the newest run, once "
                     "over.", []),
        "outcome": gauge("dlt_ops_last_run_outcome", "1 for the newest run's outcome.",
                         ["outcome"]),
        "success": gauge("dlt_ops_last_success_timestamp_seconds", "Start of the newest "
                         "completed run.", []),
        "since": gauge("dlt_ops_seconds_since_last_success", "Seconds from the newest completed "
                       "run's end to now.", []),
        "rows": CounterMetricFamily("dlt_ops_rows_loaded", "Rows loaded (the ledger's "
                                    "records_loaded).", labels=["source"]),
        "cost": CounterMetricFamily("dlt_ops_cost_dollars", "Receipt cost by basis.",
                                    labels=["source", "basis"]),
        "running": gauge("dlt_ops_running_runs", "Runs in flight (heartbeat alive).", []),
        "abandoned": gauge("dlt_ops_abandoned_runs", "Running rows whose heartbeat went silent.",
                           []),
        "chunks": gauge("dlt_ops_backfill_chunks", "Backfill chunks by status.",
                        ["backfill_id", "status"]),
        "fresh": gauge("dlt_ops_freshness_level", "1 for the source's freshness verdict against "
                       "its [sources.X.dlt_ops] freshness SLA (unset: no SLA).", ["level"]),
        "missed": gauge("dlt_ops_freshness_missed_run", "1 when a slot of the source's schedule "
                        "went by with no run started after it.", []),
        "unreadable": gauge("dlt_ops_part_unreadable", "1 when a part of a source's state could "
                            "not be read (receipts, backfill_state).", ["part"]),
    }  # fmt: skip
    for s in fleet.sources:
        _source(s, fleet, f)
    yield from f.values()


def _source(s: SourceMetrics, fleet: FleetMetrics, f: dict[str, Any]) -> None:
    """Add ``s``'s samples to the families ``f``."""
    name = s.source
    f["up"].add_metric([name, s.ledger], 1.0 if s.ledger in READABLE else 0.0)
    if s.ledger not in READABLE:
        return  # an unreadable ledger is not an empty one: no figure rather than a zero
    for status, n in sorted(s.runs_by_status.items()):
        f["runs"].add_metric([name, status], n)
    f["rows"].add_metric([name], s.rows_loaded)
    f["running"].add_metric([name], s.running)
    f["abandoned"].add_metric([name], s.abandoned)
    if s.newest is not None:
        f["start"].add_metric([name], s.newest.started_at.timestamp())
        if s.newest.completed_at is not None:
            f["end"].add_metric([name], s.newest.completed_at.timestamp())
        for out in OUTCOMES:
            f["outcome"].add_metric([name, out], 1.0 if s.newest_outcome == out else 0.0)
    if s.last_success is not None:
        f["success"].add_metric([name], s.last_success.started_at.timestamp())
        ended = s.last_success.completed_at or s.last_success.started_at
        f["since"].add_metric([name], max(0.0, (fleet.now - ended).total_seconds()))
    if s.freshness is not None:
        for level in FRESHNESS_LEVELS:
            f["fresh"].add_metric([name, level], 1.0 if s.freshness.level == level else 0.0)
        f["missed"].add_metric([name], 1.0 if s.freshness.missed_slot is not None else 0.0)
    if s.cost is None:
        f["unreadable"].add_metric([name, "receipts"], 1.0)
    else:
        for basis, dollars in sorted(s.cost.items()):
            f["cost"].add_metric([name, basis], dollars)
    if s.chunks is None:
        if any(p.startswith("backfill") for p in s.problems):
            f["unreadable"].add_metric([name, "backfill_state"], 1.0)
    else:
        for (backfill_id, status), n in sorted(s.chunks.items()):
            f["chunks"].add_metric([name, backfill_id, status], n)


class FleetCollector:
    """A prometheus-client collector that reads the fleet on every ``collect``."""

    def __init__(self, read: Callable[[], FleetMetrics]) -> None:
        self.read = read

    def collect(self) -> Iterator[Metric]:
        """The families of a fresh read."""
        yield from _families(self.read())


def render(read: Callable[[], FleetMetrics]) -> bytes:
    """The fleet in Prometheus text exposition format (prometheus-client's own writer)."""
    from prometheus_client import CollectorRegistry, generate_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(FleetCollector(read))
    return generate_latest(registry)
