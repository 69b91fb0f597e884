"""dlt-ops destination adapter for duckdb."""
