"""Checkpoints: ``@with_checkpoints`` and the ``_dlt_custom_checkpoints`` table (seed 001).

Importing this package is cheap: dlt is imported only when a checkpointed resource runs.
"""

from dlt_ops.checkpoints.decorator import with_checkpoints
from dlt_ops.checkpoints.rest_api import rest_api_checkpoints
from dlt_ops.checkpoints.service import CleanupResult, cleanup_checkpoints, list_checkpoints
from dlt_ops.checkpoints.table import DEFAULT_TABLE

__all__ = [
    "DEFAULT_TABLE",
    "CleanupResult",
    "cleanup_checkpoints",
    "list_checkpoints",
    "rest_api_checkpoints",
    "with_checkpoints",
]
