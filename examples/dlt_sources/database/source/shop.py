"""The shop source: the ``orders`` table of a SQL database, through dlt's ``sql_table``.

Columns come from the database (dlt reflects them), so there is no Pydantic model to write.
Credentials: ``[sources.shop] credentials`` in .dlt/secrets.toml or SOURCES__SHOP__CREDENTIALS.
"""

from datetime import UTC, datetime

import dlt
from dlt.sources.sql_database import sql_table

#: A datetime initial_value is what lets `pipeline backfill` / `--from/--to` bound the cursor:
#: without one dlt cannot tell the cursor's type and refuses the window.
START = datetime(2026, 1, 1, tzinfo=UTC)


@dlt.source(name="shop")
def shop_source(credentials: str = dlt.secrets.value, backend: str = "sqlalchemy"):
    """Orders, incremental on ``updated_at``; ``backend`` is sql_table's (e.g. ``pyarrow``)."""
    return sql_table(
        credentials=credentials,
        table="orders",
        backend=backend,
        incremental=dlt.sources.incremental("updated_at", initial_value=START),
    )
