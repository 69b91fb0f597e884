"""The first load into a new dataset takes turns (per dataset, on this machine).

dlt's first load into a dataset creates its schema, ``<dataset>_staging`` and its own tables
(``_dlt_version``, ``_dlt_loads``, ``_dlt_pipeline_state``) with statements that are not safe
against a second session doing the same: on PostgreSQL one of two concurrent first loads fails
on a catalog index (``UniqueViolation ... pg_type_typname_nsp_index``, ``DuplicateSchema``).
Two sources of one dataset run in parallel (``scheduler run --max-parallel``, two triggers at
once) do exactly that.

So a load into a dataset whose dlt state table does not exist yet holds an exclusive ``flock``
on ``.dlt-ops/locks/first-load/<hash of engine, database, dataset>.lock`` for the whole load;
a second first load waits for it, then finds the tables made. Later loads (the table exists)
take no lock. Single-writer engines (one writing process per database anyway) and core-tier
destinations (no adapter to ask) are left alone.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from dlt_ops.log import get_logger
from dlt_ops.project.model import STATE_DIR

if TYPE_CHECKING:
    from dlt import Pipeline

    from dlt_ops.runner.model import RunContext
    from dlt_ops.target import Target

log = get_logger(__name__)


def lock_path(root: Path, target: Target) -> Path:
    """The first-load lock file of ``target``'s dataset (engine, database and dataset)."""
    digest = hashlib.sha256(repr(target.key).encode()).hexdigest()[:24]
    return root / STATE_DIR / "locks" / "first-load" / f"{digest}.lock"


@contextmanager
def first_load_turn(ctx: RunContext, pipeline: Pipeline) -> Iterator[None]:
    """Hold the dataset's first-load lock around a load when the dataset is new."""
    target = ctx.target
    if not target.has_adapter or target.single_writer:
        yield
        return
    if _has_state_table(ctx, pipeline):
        yield  # dlt's tables exist: nothing left to race for
        return
    import fcntl

    path = lock_path(ctx.config.root, target)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = path.open("a")
    except OSError as exc:  # a read-only project: load without the turn, as before
        log.warning("run.first_load_unlocked", dataset=target.dataset, error=str(exc))
        yield
        return
    started = time.monotonic()
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # closing the file releases it
        log.debug("run.first_load_turn", dataset=target.dataset,
                  waited_s=round(time.monotonic() - started, 3))  # fmt: skip
        yield


def _has_state_table(ctx: RunContext, pipeline: Pipeline) -> bool:
    """Whether dlt's state table exists in the run's dataset (unknown: take the turn)."""
    try:
        found = ctx.open_session().fetch_columns(pipeline.default_schema.state_table_name)
    except Exception as exc:  # the load itself will say what is wrong with the destination
        log.debug("run.first_load_probe_failed", error=str(exc))
        return False
    return found is not None
