"""Checkpoints for declarative ``rest_api`` resources: ``@with_checkpoints`` semantics without
rewriting the source on ``RESTClient``.

rest_api builds each resource itself as ``dlt.resource(paginate_resource)(**bound args)``, so
there is no function for ``@with_checkpoints`` to sit under. What dlt does give us: the
resource's data step is a parameterless callable that, when the extract starts, binds the
incremental (joining a backfill window) and returns a generator that has *not started yet*;
that generator reads ``incremental.start_value`` when it builds its first request. So the
helper wraps that callable: call it, resume (move ``start_value`` to the furthest active
checkpoint), then page through it exactly like ``@with_checkpoints`` does. The reasoning and
its limits are in docs/checkpoints.md.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from dlt_ops.checkpoints import finisher
from dlt_ops.checkpoints.decorator import OPTIONS_ATTR, checkpointed_pages
from dlt_ops.checkpoints.table import DEFAULT_TABLE
from dlt_ops.log import get_logger
from dlt_ops.project.incrementals import ORIGINAL_GEN_ATTR

log = get_logger(__name__)

_RECIPE = "docs/checkpoints.md#rest_api-resources"


def rest_api_checkpoints(
    resources: Any,
    names: Iterable[str] | None = None,
    *,
    frequency: int = 10,
    offset_seconds: float = 1,
    checkpoint_table: str = DEFAULT_TABLE,
    cleanup_days: int = 7,
    value_parser: Callable[[str], Any] | None = None,
) -> Any:
    """Checkpoint rest_api resources by their incremental cursor; returns ``resources``.

    Args:
        resources: what ``rest_api_resources(config)`` or ``rest_api_source(config)`` returned
            (a list of resources or a source), or one resource.
        names: the resources to checkpoint (default: every resource with an incremental that
            does not depend on another resource).
        frequency, offset_seconds, checkpoint_table, cleanup_days, value_parser: as for
            :func:`~dlt_ops.checkpoints.with_checkpoints`; the cursor field is the one in the
            resource's ``"incremental"`` config.

    Raises:
        ValueError: an option is out of range, a named resource does not exist, has no
            incremental, or depends on another resource (a child endpoint: checkpoint it with
            the RESTClient recipe in docs/checkpoints.md).
    """
    from dlt_ops.checkpoints.decorator import with_checkpoints

    with_checkpoints("<cursor>", frequency, offset_seconds, checkpoint_table, cleanup_days,
                     value_parser)  # fmt: skip  # checks every option, like the decorator
    by_name = _by_name(resources)
    if names is None:
        chosen = [r for r in by_name.values() if _checkpointable(r) is None]
    else:
        chosen = []
        for name in names:
            if name not in by_name:
                raise ValueError(
                    f"rest_api_checkpoints: no resource '{name}'; resources: "
                    f"{', '.join(by_name) or 'none'}"
                )
            why = _checkpointable(by_name[name])
            if why is not None:
                raise ValueError(f"rest_api_checkpoints: resource '{name}' {why}")
            chosen.append(by_name[name])
    options = {
        "frequency": frequency,
        "offset_seconds": offset_seconds,
        "checkpoint_table": checkpoint_table,
        "cleanup_days": cleanup_days,
        "value_parser": value_parser,
    }
    for resource in chosen:
        _wrap(resource, options)
    return resources


def _by_name(resources: Any) -> dict[str, Any]:
    if hasattr(resources, "resources") and hasattr(resources, "selected_resources"):
        return dict(resources.resources)  # a DltSource
    if hasattr(resources, "_pipe"):
        return {resources.name: resources}
    return {r.name: r for r in resources}


def _checkpointable(resource: Any) -> str | None:
    """Why ``resource`` cannot be checkpointed here (``None`` when it can)."""
    from dlt_ops.project.incrementals import incremental_of

    pipe = resource._pipe
    if pipe.has_parent:
        return (
            "depends on another resource (its pages come per parent item), so one cursor "
            f"cannot describe its progress; see {_RECIPE} for the RESTClient recipe"
        )
    if not callable(pipe.gen):
        return "is already being extracted (its data step is no longer a callable)"
    if incremental_of(resource) is None:
        return (
            'has no "incremental" in its endpoint config: a checkpoint resumes by moving the '
            "incremental's start value"
        )
    return None


def _wrap(resource: Any, options: dict[str, Any]) -> None:
    from dlt.extract.incremental import IncrementalResourceWrapper

    from dlt_ops.project.incrementals import incremental_of

    finisher.install()  # before any extract step starts, so the first one can hand off
    pipe = resource._pipe
    original = pipe.gen
    if getattr(original, ORIGINAL_GEN_ATTR, None) is not None:
        return  # already checkpointed
    declared = incremental_of(resource)
    cursor = declared.incremental.cursor_path if declared is not None else None
    step = resource.incremental  # shared by every clone dlt makes of the pipe
    opts = {**options, "cursor_field": cursor}

    @functools.wraps(original)
    def checkpointed() -> Iterator[Any]:
        pages = original()  # dlt binds the incremental here; no request has been made yet
        incremental = step.incremental if isinstance(step, IncrementalResourceWrapper) else None
        if incremental is None and declared is not None:
            incremental = declared.incremental
        name = _pipe_name(resource)
        yield from checkpointed_pages(lambda: pages, incremental, name, opts)

    setattr(checkpointed, ORIGINAL_GEN_ATTR, original)
    setattr(checkpointed, OPTIONS_ATTR, opts)
    pipe.replace_gen(checkpointed)
    log.debug("checkpoints.rest_api_wrapped", resource=resource.name, cursor=cursor)


def _pipe_name(resource: Any) -> str:
    try:
        from dlt.extract.state import get_current_pipe_name

        return get_current_pipe_name()
    except Exception:
        return str(resource.name)
