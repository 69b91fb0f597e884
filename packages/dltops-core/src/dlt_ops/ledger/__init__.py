"""The runs ledger: ``_dlt_ops_runs`` rows written through sinks and read back by ``status``."""

from dlt_ops.ledger.model import (
    RUNS_TABLE,
    RUNS_TABLE_NAME,
    SEED_KEYS,
    RunRecord,
    RunStatus,
    summarize_error,
)
from dlt_ops.ledger.sinks import LedgerQuery, LedgerSink, LedgerSinkContext, ReadableLedgerSink
from dlt_ops.ledger.writer import LedgerWriter

__all__ = [
    "RUNS_TABLE",
    "RUNS_TABLE_NAME",
    "SEED_KEYS",
    "LedgerQuery",
    "LedgerSink",
    "LedgerSinkContext",
    "LedgerWriter",
    "ReadableLedgerSink",
    "RunRecord",
    "RunStatus",
    "summarize_error",
]
