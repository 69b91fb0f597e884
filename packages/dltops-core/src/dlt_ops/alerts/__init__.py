"""Alerts: failed runs and failed assertions, delivered to every configured alert sink."""

from dlt_ops.alerts.model import (
    ALERT_SINK,
    Alert,
    AlertKind,
    AlertSink,
    AlertSinkContext,
    AlertSinkFactory,
)

__all__ = ["ALERT_SINK", "Alert", "AlertKind", "AlertSink", "AlertSinkContext", "AlertSinkFactory"]
