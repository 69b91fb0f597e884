"""OpenLineage run events for dlt-ops runs and backfill chunks (``[dlt_ops.lineage]``).

``ids`` maps dlt-ops run ids to the UUIDs OpenLineage requires, ``events`` turns a run's facts
into a ``RunEvent`` with the client's own classes, ``emitter`` sends them off the run's thread
within a bounded time. The built-in ``lineage`` lifecycle plugin (``dlt_ops.builtin.lineage``)
feeds them; see docs/lineage.md.
"""
