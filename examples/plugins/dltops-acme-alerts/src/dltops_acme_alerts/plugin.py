"""Registers the acme_alerts alert sink.

Entry point group ``dlt_ops.alert_sink``.
"""

from __future__ import annotations

from dlt_ops import hookimpl


@hookimpl
def dlt_ops_register_alert_sinks(register):  # noqa: ANN001, ANN201
    from dltops_acme_alerts.alert_sink import AcmeAlertsAlertSink

    register(AcmeAlertsAlertSink, name="acme_alerts")
