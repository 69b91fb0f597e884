"""The alert-sink contract: what a sink is built from, what it receives, what it must do.

Plugin authors implement :class:`AlertSink` and register a factory taking an
:class:`AlertSinkContext` through ``dlt_ops_register_alert_sinks`` (kind ``alert_sink``,
entry-point group ``dlt_ops.alert_sink``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from dlt_ops.plugins.kinds import Kind


class AlertKind(StrEnum):
    """Why an alert was raised."""

    #: A run failed (any cause other than an assertion).
    run_failed = "run_failed"
    #: A ``fail`` assertion stopped a run before load.
    assertion_failed = "assertion_failed"
    #: ``pipeline reconcile`` found drift it had not alerted before.
    schema_drift = "schema_drift"
    #: The scheduler found a source past its freshness SLA (``warn`` or ``error``).
    freshness_missed = "freshness_missed"
    #: The scheduler found a schedule slot that went by with no run started.
    run_missed = "run_missed"
    #: A freshness or missed-run alert no longer holds (the message says which).
    recovered = "recovered"


@dataclass(frozen=True)
class Alert:
    """One notice for the people who run the project. Every string is already redacted."""

    kind: AlertKind
    source: str
    run_id: str
    pipeline_name: str
    destination: str
    dataset: str
    trigger_source: str
    started_at: datetime
    #: One line: what went wrong (the ledger's ``error_summary``).
    message: str
    completed_at: datetime | None = None
    backfill_id: str | None = None
    #: ``"<check> on <resource>"`` for every failed check (assertion alerts).
    failed_checks: tuple[str, ...] = ()
    #: One JSON object per newly drifted column (schema-drift alerts).
    drift: tuple[Mapping[str, Any], ...] = ()

    def as_json(self) -> dict[str, Any]:
        """JSON-ready dict, timestamps ISO-8601."""
        out: dict[str, Any] = {}
        for key in self.__dataclass_fields__:
            value = getattr(self, key)
            if isinstance(value, datetime):
                value = value.isoformat()
            elif isinstance(value, tuple):
                value = list(value)
            out[key] = value
        return out

    def redacted_json(self) -> dict[str, Any]:
        """:meth:`as_json` with every string, at any depth, redacted again: what a sink
        delivers. The fields were redacted when the alert was built, but ``drift`` and
        ``failed_checks`` come from other plugins, and a secret may be harvested later."""
        from dlt_ops.redact import redact

        def scrub(value: Any) -> Any:
            if isinstance(value, str):
                return redact(value)
            if isinstance(value, Mapping):
                return {scrub(k): scrub(v) for k, v in value.items()}
            if isinstance(value, list | tuple):
                return [scrub(v) for v in value]
            return value

        scrubbed: dict[str, Any] = scrub(self.as_json())
        return scrubbed


@dataclass(frozen=True)
class AlertSinkContext:
    """Everything a sink factory may use: its name, its ``[dlt_ops.alert_sink.<name>]``
    options and the project root."""

    name: str
    project_root: Path
    options: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class AlertSink(Protocol):
    """Delivers alerts somewhere. Best-effort: the core isolates every call."""

    #: Human label for log lines (``log``, a webhook's host).
    target: str

    def send(self, alert: Alert) -> None:
        """Deliver ``alert``; raise when it could not be delivered (the core logs it)."""


#: What ``dlt_ops_register_alert_sinks`` registers: called once per run that alerts.
AlertSinkFactory = Callable[[AlertSinkContext], AlertSink]
#: The typed key: ``registry.get(ALERT_SINK, name)`` is an :data:`AlertSinkFactory`.
ALERT_SINK: Kind[AlertSinkFactory] = Kind("alert_sink", AlertSinkFactory)
