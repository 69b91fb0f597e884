"""Registers the acme_ledger ledger sink.

Entry point group ``dlt_ops.ledger_sink``.
"""

from __future__ import annotations

from dlt_ops import hookimpl


@hookimpl
def dlt_ops_register_ledger_sinks(register):  # noqa: ANN001, ANN201
    from dltops_acme_ledger.ledger_sink import AcmeLedgerLedgerSink

    register(AcmeLedgerLedgerSink, name="acme_ledger")
