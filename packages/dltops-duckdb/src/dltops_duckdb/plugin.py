"""Registers the DuckDB adapter; importing this module imports neither duckdb nor dlt."""

from dlt_ops import hookimpl


@hookimpl
def dlt_ops_register_destinations(register):  # noqa: ANN001, ANN201 - pluggy hook
    from dltops_duckdb.adapter import DuckDBAdapter

    register(DuckDBAdapter, name="duckdb")
