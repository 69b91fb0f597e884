"""dlt working files that dlt-ops neither keeps nor reads.

dlt pickles each pipeline's last trace to ``<working dir>/trace.pickle``. Two reasons to drop it
from the working directories dlt-ops owns (``.dlt-ops/pipelines/...``):

* it carries exception messages verbatim, so a secret quoted by a failing source would be kept
  on disk (redaction cannot reach into dlt's pickle);
* reading it means unpickling: dlt loads it whenever ``pipeline.last_trace`` is asked before
  the process ran a step, so a planted file would run code.

dlt-ops keeps the trace it needs in memory; the ledger and receipts are the durable record.
"""

from __future__ import annotations

from pathlib import Path

from dlt_ops.log import get_logger

log = get_logger(__name__)

TRACE_FILE = "trace.pickle"  # dlt.pipeline.trace.TRACE_FILE_NAME


def discard_pickled_trace(working_dir: Path) -> None:
    """Remove dlt's pickled trace from one pipeline's working directory (best effort)."""
    try:
        (working_dir / TRACE_FILE).unlink(missing_ok=True)
    except OSError as exc:  # a read-only project: nothing was written there either
        log.debug("working_state.trace_not_removed", path=str(working_dir), error=str(exc))
