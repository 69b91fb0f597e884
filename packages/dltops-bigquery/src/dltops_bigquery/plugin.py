"""Registers the BigQuery adapter; importing this module imports neither the SDK nor dlt."""

from dlt_ops import hookimpl


@hookimpl
def dlt_ops_register_destinations(register):  # noqa: ANN001, ANN201 - pluggy hook
    from dltops_bigquery.adapter import BigQueryAdapter

    register(BigQueryAdapter, name="bigquery")
