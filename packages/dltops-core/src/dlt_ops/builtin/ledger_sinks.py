"""Built-in ledger sinks: ``destination`` (the default) and ``jsonl``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dlt_ops import hookimpl
from dlt_ops.plugins import Register

if TYPE_CHECKING:
    from dlt_ops.ledger.sinks import LedgerSinkFactory


@hookimpl
def dlt_ops_register_ledger_sinks(register: Register[LedgerSinkFactory]) -> None:
    """Register the two built-in sinks; their modules load only when a sink is built."""
    from dlt_ops.ledger.destination_sink import DestinationLedgerSink
    from dlt_ops.ledger.jsonl_sink import JsonlLedgerSink

    register(DestinationLedgerSink, name="destination")
    register(JsonlLedgerSink, name="jsonl")
