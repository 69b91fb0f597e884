"""``list_checkpoints`` / ``cleanup_checkpoints``: read and prune the checkpoint table directly.

Neither needs local dlt pipeline state: the destination, dataset and credentials come from the
project config (``--source NAME``, or ``--pipeline <source>_pipeline``) and the table is reached
through the destination's adapter. Tooling that already holds a ``DestinationSession`` passes it
as ``session=`` together with the pipeline name; a script that holds the dlt pipeline object
passes it as ``pipeline=`` (0.1's signature): its destination, dataset and credentials are used,
with no project config.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from dlt_ops.adapters import DestinationSession, Statement, check_identifier
from dlt_ops.checkpoints.table import ACTIVE, COLUMNS, COMPLETED, DEFAULT_TABLE
from dlt_ops.errors import UnregisteredDestinationError, UsageError
from dlt_ops.log import get_logger

log = get_logger(__name__)


@dataclass(frozen=True)
class CleanupResult:
    """What ``cleanup_checkpoints`` did: rows deleted, active rows left in scope."""

    pipeline_name: str
    deleted: int
    active_kept: int


def resolve_pipeline(
    pipeline_name: str | None, source: str | None, root: Path | None = None
) -> tuple[Any, str, str]:
    """``(config, source, pipeline_name)`` from ``--pipeline`` and/or ``--source``."""
    from dlt_ops.config import find_project_root, load_project_config
    from dlt_ops.destinations import pipeline_name_for
    from dlt_ops.project.discovery import discover

    if not pipeline_name and not source:
        raise UsageError(
            "Missing option '--pipeline NAME' or '--source NAME': the checkpoints' pipeline."
        )
    config = load_project_config(find_project_root(root))
    known = sorted(set(discover(config.root).sources) | set(config.sources))
    if source is not None:
        if source not in known:
            from dlt_ops.errors import UnknownSourceError

            raise UnknownSourceError(source, known)
        derived = pipeline_name_for(source)
        if pipeline_name and pipeline_name != derived:
            raise UsageError(
                f"--pipeline {pipeline_name!r} does not belong to --source {source!r} (its "
                f"pipeline is {derived!r}); pass one of them."
            )
        return config, source, derived
    by_pipeline = {pipeline_name_for(s): s for s in known}
    if pipeline_name not in by_pipeline:
        raise UsageError(
            f"pipeline {pipeline_name!r} is not a pipeline of this project; its pipelines are: "
            f"{', '.join(sorted(by_pipeline)) or 'none'} (dlt pipeline name = <source>_pipeline; "
            f"or pass --source NAME)."
        )
    return config, by_pipeline[str(pipeline_name)], str(pipeline_name)


@contextmanager
def _session(
    pipeline_name: str | None,
    source: str | None,
    root: Path | None,
    session: DestinationSession | None,
    *,
    read_only: bool,
    pipeline: Any = None,
) -> Iterator[tuple[DestinationSession, str]]:
    if session is not None:
        if not pipeline_name:
            raise UsageError("pass pipeline_name together with session=")
        yield session, pipeline_name
        return
    if pipeline is not None:
        yield from _pipeline_session(pipeline, pipeline_name)
        return
    from dlt_ops.destinations import connection_target, load_adapter, project_registry
    from dlt_ops.target import resolve_target

    config, source, name = resolve_pipeline(pipeline_name, source, root)
    registry = project_registry(config)
    where = resolve_target(registry, config, source)
    if not where.has_adapter:
        raise UnregisteredDestinationError(
            name, where.engine, "checkpoints", registry.names("destination")
        )
    target = connection_target(config, where, read_only=read_only)
    opened = DestinationSession.open(load_adapter(registry, where.engine), target)
    try:
        yield opened, name
    finally:
        opened.close()


def _pipeline_session(pipeline: Any, pipeline_name: str | None) -> Iterator[tuple[Any, str]]:
    """A session on a live dlt pipeline's own destination and dataset."""
    from dlt_ops.checkpoints.manager import _own_session

    name = str(getattr(pipeline, "pipeline_name", "") or "")
    if pipeline_name and pipeline_name != name:
        raise UsageError(
            f"pipeline_name {pipeline_name!r} is not the given pipeline's name {name!r}; pass "
            "one of them."
        )
    opened = _own_session(pipeline)
    try:
        yield opened, name
    finally:
        opened.close()


def _iso(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def list_checkpoints(
    pipeline_name: str | None = None,
    checkpoint_table: str = DEFAULT_TABLE,
    pipeline: Any = None,
    *,
    source: str | None = None,
    resource_name: str | None = None,
    root: Path | None = None,
    session: DestinationSession | None = None,
) -> list[dict[str, Any]]:
    """Checkpoint rows of one pipeline, newest first, as dicts with ISO timestamps.

    An absent table (no checkpoint ever written there) is an empty list.
    """
    table = check_identifier(checkpoint_table, subject="checkpoint_table")
    opening = _session(pipeline_name, source, root, session, read_only=True, pipeline=pipeline)
    with opening as (live, name):
        if live.fetch_columns(table) is None:
            return []
        where, params = "pipeline_name = ?", [name]
        if resource_name is not None:
            where += " AND resource_name = ?"
            params.append(resource_name)
        stmt = Statement(
            f"SELECT {', '.join(COLUMNS)} FROM {{{table}}} WHERE {where} "
            "ORDER BY created_at DESC, page_number DESC"
        )
        rows = live.query(stmt, *params)
    return [{k: _iso(v) for k, v in zip(COLUMNS, row, strict=True)} for row in rows]


def cleanup_checkpoints(
    pipeline_name: str | None = None,
    resource_name: str | None = None,
    checkpoint_table: str = DEFAULT_TABLE,
    pipeline: Any = None,
    *,
    source: str | None = None,
    include_active: bool = False,
    root: Path | None = None,
    session: DestinationSession | None = None,
) -> CleanupResult:
    """Delete a pipeline's (or one resource's) checkpoint rows.

    By default only ``completed`` rows go: ``active`` rows are live resume state, survive, and
    are reported at WARNING with a count. ``include_active=True`` deletes every row in scope;
    the next run of each affected resource restarts its window from the beginning.
    """
    table = check_identifier(checkpoint_table, subject="checkpoint_table")
    opening = _session(pipeline_name, source, root, session, read_only=False, pipeline=pipeline)
    with opening as (live, name):
        if live.fetch_columns(table) is None:
            return CleanupResult(name, 0, 0)
        scope, params = "pipeline_name = ?", [name]
        if resource_name is not None:
            scope += " AND resource_name = ?"
            params.append(resource_name)
        if include_active:
            deleted = live.execute(Statement(f"DELETE FROM {{{table}}} WHERE {scope}"), *params)
            kept = 0
        else:
            deleted = live.execute(
                Statement(f"DELETE FROM {{{table}}} WHERE {scope} AND status = ?"),
                *params,
                COMPLETED,
            )
            count = Statement(f"SELECT COUNT(*) FROM {{{table}}} WHERE {scope} AND status = ?")
            kept = int(live.query(count, *params, ACTIVE)[0][0])
    if kept:
        log.warning(
            f"{kept} active checkpoint(s) kept for pipeline '{name}': they are live resume "
            "state (use --include-active to delete them; the affected resources then restart "
            "their window)",
            pipeline=name,
            active=kept,
        )
    log.info("checkpoints.cleaned", pipeline=name, resource=resource_name, deleted=deleted)
    return CleanupResult(name, deleted, kept)
