"""The destination-adapter contract: protocol, capabilities, canonical statements, base class.

Import cost matters here (the CLI imports this module): no driver and no dlt is imported.
"""

from dlt_ops.adapters.base import SqlAdapterBase
from dlt_ops.adapters.model import (
    IDENTIFIER_RE,
    Capabilities,
    Column,
    ColumnInfo,
    ColumnType,
    ConnectionTarget,
    TableSpec,
    check_identifier,
)
from dlt_ops.adapters.protocol import DestinationAdapter, SqlClient
from dlt_ops.adapters.session import DestinationSession
from dlt_ops.adapters.statements import Statement, sql

__all__ = [
    "IDENTIFIER_RE",
    "Capabilities",
    "Column",
    "ColumnInfo",
    "ColumnType",
    "ConnectionTarget",
    "DestinationAdapter",
    "DestinationSession",
    "SqlAdapterBase",
    "SqlClient",
    "Statement",
    "TableSpec",
    "check_identifier",
    "sql",
]
