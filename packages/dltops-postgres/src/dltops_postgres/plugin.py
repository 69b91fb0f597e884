"""Registers the Postgres adapter; importing this module imports neither psycopg nor dlt."""

from dlt_ops import hookimpl


@hookimpl
def dlt_ops_register_destinations(register):  # noqa: ANN001, ANN201 - pluggy hook
    from dltops_postgres.adapter import PostgresAdapter

    register(PostgresAdapter, name="postgres")
