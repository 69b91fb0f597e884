"""Cleaning a source away: its data tables, dlt state and dlt-ops rows, planned and audited."""
