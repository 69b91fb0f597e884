"""Extract gates: features that see the extracted data before it may load.

Plugins contribute gates through the ``dlt_ops_extract_gates`` hook: once per prepared run
(once per ``pipeline run``, once per backfill command) a plugin returns a
:class:`GateFactory`, or ``None`` when it has nothing to gate for that source. For each run
(each backfill chunk) the runner asks every factory for a fresh gate, then calls
``attach(source)`` before extract (a gate may add transform steps to resources and return the
source) and ``after_extract(pipeline, load_id)`` once the run's load package exists and before
normalize; raising there fails the run before anything loads. ``summary()`` returns what the
gate decided per resource, for logs and receipts.

The protocols are defined in :mod:`dlt_ops.runner.model` (with the run they see) and
re-exported here for gate authors.
"""

from __future__ import annotations

from dlt_ops.runner.model import ExtractGate, GateFactory, GateSummary, ResourceVerdicts

__all__ = ["ExtractGate", "GateFactory", "GateSummary", "ResourceVerdicts", "merged_verdicts"]


def merged_verdicts(summaries: list[GateSummary]) -> dict[str, ResourceVerdicts]:
    """Per resource, the verdicts of every gate added up."""
    out: dict[str, ResourceVerdicts] = {}
    for summary in summaries:
        for name, v in summary.resources.items():
            acc = out.get(name, ResourceVerdicts())
            out[name] = ResourceVerdicts(
                acc.rejected + v.rejected, acc.warned + v.warned, acc.failed + v.failed
            )
    return out
