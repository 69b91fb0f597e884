"""Building the dlt pipeline for a run: project-scoped working state, project-relative DuckDB."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dlt_ops.config import ProjectConfig
from dlt_ops.destinations import ResolvedDestination, connection_target, duckdb_database_path

#: dlt-ops' local state lives here, inside the project (git-ignored by ``init``).
STATE_DIR = ".dlt-ops"


def pipelines_dir(root: Path) -> Path:
    """dlt's working directories for this project's pipelines (never ``~/.dlt``)."""
    return root / STATE_DIR / "pipelines"


@contextmanager
def project_environment(root: Path) -> Iterator[None]:
    """Point dlt at the project's ``.dlt/`` whatever the cwd, restoring the env afterwards."""
    previous = os.environ.get("DLT_PROJECT_DIR")
    os.environ["DLT_PROJECT_DIR"] = str(root)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("DLT_PROJECT_DIR", None)
        else:
            os.environ["DLT_PROJECT_DIR"] = previous


def dlt_destination(config: ProjectConfig, source: str, where: ResolvedDestination) -> Any:
    """The dlt destination for ``source``: DuckDB pinned to the project's file, else dlt's ref."""
    import dlt

    if where.engine == "duckdb":
        path = duckdb_database_path(connection_target(config, where))
        return dlt.destinations.duckdb(credentials=path)
    return config.destination_for(source)


def build_pipeline(
    config: ProjectConfig,
    source: str,
    where: ResolvedDestination,
    *,
    working_dir: Path | None = None,
) -> Any:
    """``dlt.pipeline(<source>_pipeline, ...)`` with working state under the project."""
    import dlt

    from dlt_ops.working_state import discard_pickled_trace

    base = working_dir or pipelines_dir(config.root)
    # before anything can ask dlt for `last_trace`: a trace file left (or planted) there would
    # be unpickled
    discard_pickled_trace(base / where.pipeline_name)
    return dlt.pipeline(
        pipeline_name=where.pipeline_name,
        destination=dlt_destination(config, source, where),
        dataset_name=where.dataset,
        pipelines_dir=str(base),
        dev_mode=False,
    )
