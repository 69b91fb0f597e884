"""The assertion gate as a lifecycle plugin (entry point ``assertions`` in ``dlt_ops.lifecycle``).

Contributes the pre-load assertion gate to the runs of sources that declare
``[sources.X.dlt_ops.assertions]``; the runner knows nothing of assertions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dlt_ops import hookimpl

if TYPE_CHECKING:
    from dlt_ops.runner.gates import GateFactory
    from dlt_ops.runner.prepare import PreparedRun


@hookimpl
def dlt_ops_extract_gates(prepared: PreparedRun) -> GateFactory | None:
    """The assertion gate factory when the source declares assertions (dlt loads only then)."""
    if not prepared.config.source(prepared.source).assertions:
        return None
    from dlt_ops.assertions.gate import AssertionGateFactory

    return AssertionGateFactory(prepared)
