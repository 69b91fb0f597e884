"""Alerts: failed runs and failed assertions, delivered to every configured alert sink."""

from dlt_ops.alerts.model import Alert, AlertKind, AlertSink, AlertSinkContext, AlertSinkFactory

__all__ = ["Alert", "AlertKind", "AlertSink", "AlertSinkContext", "AlertSinkFactory"]
