"""Extract gates: features that see the extracted data before it may load.

A gate is built per run from the source's config. The runner calls ``attach(source)`` before
extract (a gate may add transform steps to resources and return the source), then
``after_extract(pipeline, load_id)`` once the run's load package exists and before normalize;
raising there fails the run before anything loads. ``summary()`` returns counts for the ledger
log and receipts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from dlt_ops.runner.context import RunContext


class ExtractGate(Protocol):
    """A check between extract and load."""

    def attach(self, source: Any) -> Any:
        """Wire into ``source`` before extract; return the (possibly wrapped) source."""

    def after_extract(self, pipeline: Any, load_id: str) -> None:
        """Decide on the extracted package ``load_id``; raise to stop the run before load."""

    def summary(self) -> dict[str, Any]:
        """Counts worth recording (per resource), for logs and receipts."""


def build_gates(ctx: RunContext, source: Any) -> list[ExtractGate]:
    """Every gate that applies to this run: today the assertion gate, when the selected
    resources declare assertions (``[sources.X.dlt_ops.assertions.<resource>]``)."""
    if not ctx.config.source(ctx.source).assertions:
        return []
    from dlt_ops.assertions.gate import AssertionGate

    gate = AssertionGate.for_run(ctx, source)
    return [gate] if gate is not None else []
