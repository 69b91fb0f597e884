"""Schema drift: the tables dlt created, compared with the resources' declared models."""

from dlt_ops.reconcile.model import DriftFinding, DriftKind, RemovalSettings, SourceReport

__all__ = ["DriftFinding", "DriftKind", "RemovalSettings", "SourceReport"]
