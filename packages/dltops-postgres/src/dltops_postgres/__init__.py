"""dlt-ops destination adapter for PostgreSQL (psycopg 3)."""
