"""The acme_runlog observer: a JSON line per finished run.

The lines go to ``.dlt-ops/acme_runlog-runs.jsonl`` in the project.
"""

from __future__ import annotations

import json
import threading
from typing import Any

_LOCK = threading.Lock()


def record_finished(run: Any, outcome: Any) -> None:
    """Append the run's id, source, status and phase (backfill chunks may finish on threads)."""
    path = run.config.root / ".dlt-ops" / "acme_runlog-runs.jsonl"
    status = outcome.record.status
    line = json.dumps({"run_id": run.run_id, "source": run.source, "status": status})
    with _LOCK:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as out:
            out.write(line + "\n")
