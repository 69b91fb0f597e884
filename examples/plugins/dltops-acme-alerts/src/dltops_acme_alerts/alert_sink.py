"""The acme_alerts alert sink: each alert, redacted, as one JSON line in a file."""

from __future__ import annotations

import json
import threading

from dlt_ops.plugin_api import Alert, AlertSinkContext


class AcmeAlertsAlertSink:
    """Appends alerts to ``path`` (option, relative to the project root)."""

    def __init__(self, context: AlertSinkContext) -> None:
        relative = str(context.options.get("path", ".dlt-ops/acme_alerts-alerts.jsonl"))
        self.path = context.project_root / relative
        self.target = str(self.path)
        self._lock = threading.Lock()

    def send(self, alert: Alert) -> None:
        """Write one line; raise when the file cannot be written (the core logs it)."""
        line = json.dumps(alert.redacted_json(), default=str)
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as out:
                out.write(line + "\n")
