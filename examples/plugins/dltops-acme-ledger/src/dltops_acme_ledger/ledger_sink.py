"""The acme_ledger ledger sink: each run attempt's latest state in a JSON file."""

from __future__ import annotations

import json
import threading

from dlt_ops.ledger import RunRecord
from dlt_ops.plugin_api import LedgerSinkContext


def attempt_key(run: RunRecord) -> str:
    """An attempt is (run_id, source_section, started_at)."""
    return f"{run.run_id}|{run.source_section}|{run.started_at.isoformat()}"


class AcmeLedgerLedgerSink:
    """Writes ``path`` (option, relative to the project root) on every call."""

    def __init__(self, context: LedgerSinkContext) -> None:
        relative = str(context.options.get("path", ".dlt-ops/acme_ledger-ledger.json"))
        self.path = context.project_root / relative
        self.target = str(self.path)
        self._lock = threading.Lock()

    def _write(self, run: RunRecord) -> None:
        with self._lock:
            runs = json.loads(self.path.read_text()) if self.path.exists() else {}
            runs[attempt_key(run)] = run.as_json()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(runs, indent=1, default=str))

    def start(self, run: RunRecord) -> None:
        self._write(run)

    def heartbeat(self, run: RunRecord) -> None:
        self._write(run)

    def finish(self, run: RunRecord) -> None:
        self._write(run)
