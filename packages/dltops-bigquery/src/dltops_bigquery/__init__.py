"""dlt-ops destination adapter for bigquery."""
