"""dlt-ops destination adapter for postgres."""
