"""Extract gates: features that see the extracted data before it may load.

Plugins contribute gates through the ``dlt_ops_extract_gates`` hook: once per prepared run
(once per ``pipeline run``, once per backfill command) a plugin returns a
:class:`GateFactory`, or ``None`` when it has nothing to gate for that source. For each run
(each backfill chunk) the runner asks every factory for a fresh gate, then calls
``attach(source)`` before extract (a gate may add transform steps to resources and return the
source) and ``after_extract(pipeline, load_id)`` once the run's load package exists and before
normalize; raising there fails the run before anything loads. ``summary()`` returns what the
gate decided per resource, for logs and receipts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from dlt import Pipeline
    from dlt.extract.source import DltSource

    from dlt_ops.runner.context import RunContext


@dataclass(frozen=True)
class ResourceVerdicts:
    """What a gate decided about one resource's rows: held out, loaded with a warning, or
    counted towards failing the run."""

    rejected: int = 0
    warned: int = 0
    failed: int = 0


@dataclass(frozen=True)
class GateSummary:
    """One gate's account of one run."""

    gate: str
    resources: Mapping[str, ResourceVerdicts] = field(default_factory=dict)
    #: ``"<check> on <resource>"`` for every check that failed the run.
    failed_checks: tuple[str, ...] = ()


class ExtractGate(Protocol):
    """A check between extract and load, built fresh for each run."""

    #: Short label (``assertions``, ``receipts``), used in logs and summaries.
    name: str

    def attach(self, source: DltSource) -> DltSource:
        """Wire into ``source`` before extract; return the (possibly wrapped) source."""

    def after_extract(self, pipeline: Pipeline, load_id: str) -> None:
        """Decide on the extracted package ``load_id``; raise to stop the run before load."""

    def summary(self) -> GateSummary:
        """What the gate decided, per resource."""


class GateFactory(Protocol):
    """What a plugin returns from ``dlt_ops_extract_gates``: builds one gate per run."""

    def check(self, source: DltSource) -> None:
        """Static checks against the instantiated source (its selected resources); raise a
        :class:`~dlt_ops.errors.PreflightError` to refuse the run before extract."""

    def gate(self, run: RunContext, source: DltSource) -> ExtractGate | None:
        """The gate for this run (checks included), or ``None`` when nothing applies."""


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
