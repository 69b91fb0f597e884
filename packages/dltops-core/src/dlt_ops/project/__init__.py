"""The project model: layout conventions, Phase-1 AST discovery, Phase-2 sandboxed import,
and ``init`` templates. Phase 1 (:func:`discover`) imports neither dlt nor project code."""

from dlt_ops.project.discovery import discover
from dlt_ops.project.model import (
    RESOURCE_DIR,
    SOURCE_DIR,
    STATE_DIR,
    ModuleFacts,
    Pipeline,
    Project,
    ResourceDef,
    SourceInfo,
)

__all__ = [
    "RESOURCE_DIR",
    "SOURCE_DIR",
    "STATE_DIR",
    "ModuleFacts",
    "Pipeline",
    "Project",
    "ResourceDef",
    "SourceInfo",
    "discover",
]
