"""The fleet in Prometheus text format: ``dlt-ops metrics`` and ``scheduler run --serve``.

``fleet`` reads the figures from the ledgers, receipts and backfill state; ``exposition``
turns them into metric families for prometheus-client; ``server`` serves ``/metrics``,
``/healthz`` and the live fleet report. See docs/metrics.md.
"""
