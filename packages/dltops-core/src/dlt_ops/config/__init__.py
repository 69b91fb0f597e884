"""Project configuration: root discovery, typed ``[dlt_ops]`` tables, credentials."""

from dlt_ops.config.loader import ConfigWarning, ProjectConfig, SourceConfig, load_project_config
from dlt_ops.config.root import CONFIG_RELPATH, find_project_root, is_project_root
from dlt_ops.config.schema import Schedule

__all__ = [
    "CONFIG_RELPATH",
    "ConfigWarning",
    "ProjectConfig",
    "Schedule",
    "SourceConfig",
    "find_project_root",
    "is_project_root",
    "load_project_config",
]
