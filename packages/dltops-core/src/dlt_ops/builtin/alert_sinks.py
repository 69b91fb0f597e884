"""Built-in alert sinks: ``log`` (the default) and ``webhook`` (a JSON POST).

``[dlt_ops.alert_sink.webhook]`` options: ``url`` (required, http or https), ``timeout_s``
(per attempt, default 5, at most 30), ``retries`` (after the first attempt, default 2, at most
5) and ``backoff_s`` (wait before retry *n* is ``n × backoff_s``, default 1, at most 10). The
body is the alert as one JSON document, every string in it redacted again before it leaves
(``Alert.redacted_json``: redacting the JSON text instead could cut a string at an escaped
quote). The ``log`` sink logs the same redacted fields.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from dlt_ops import hookimpl
from dlt_ops.alerts.model import Alert, AlertSinkContext, AlertSinkFactory
from dlt_ops.errors import ConfigError
from dlt_ops.log import get_logger
from dlt_ops.plugins import Register
from dlt_ops.plugins.bound import bounded_option
from dlt_ops.redact import redact

log = get_logger(__name__)


class LogAlertSink:
    """Writes each alert as one ERROR log line (``alert``), with its fields."""

    target = "log"

    def __init__(self, context: AlertSinkContext) -> None:
        self.context = context

    def send(self, alert: Alert) -> None:
        """Log the alert."""
        log.error("alert", **alert.redacted_json())  # redacted even under a foreign log set-up


def _bounded(options: Mapping[str, Any], key: str, default: float, most: float) -> float:
    return bounded_option(options, key, default, most, table="[dlt_ops.alert_sink.webhook]")


class WebhookAlertSink:
    """POSTs each alert as JSON to ``url``; bounded timeout and retries."""

    def __init__(self, context: AlertSinkContext) -> None:
        options = context.options
        url = options.get("url")
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                "[dlt_ops.alert_sink.webhook] url must be an http(s) URL, e.g. "
                '"https://hooks.example.com/dlt-ops".'
            )
        self.url: str = url  # type: ignore[assignment]  # checked just above
        self.target = f"webhook {parts.hostname}"  # never the full URL: it may carry a token
        self.timeout = _bounded(options, "timeout_s", 5, 30) or 5.0
        self.retries = int(_bounded(options, "retries", 2, 5))
        self.backoff = _bounded(options, "backoff_s", 1, 10)

    def send(self, alert: Alert) -> None:
        """POST the alert; retry on a connection error or a 5xx; raise when every try failed."""
        import urllib.error
        import urllib.request

        body = json.dumps(alert.redacted_json()).encode()
        request = urllib.request.Request(
            self.url, data=body, method="POST",
            headers={"Content-Type": "application/json", "User-Agent": "dlt-ops"},
        )  # fmt: skip
        last: Exception | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * attempt)
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    response.read()
                return
            except urllib.error.HTTPError as exc:
                last = exc
                if exc.code < 500:  # the receiver refused this document: resending won't help
                    break
            except (urllib.error.URLError, OSError) as exc:
                last = exc
            log.warning("alerts.webhook_retry", target=self.target, attempt=attempt + 1,
                        error=redact(f"{type(last).__name__}: {last}"))  # fmt: skip
        raise ConnectionError(f"{self.target} did not accept the alert: {last}")


@hookimpl
def dlt_ops_register_alert_sinks(register: Register[AlertSinkFactory]) -> None:
    """Register ``log`` and ``webhook``."""
    register(LogAlertSink, name="log")
    register(WebhookAlertSink, name="webhook")
