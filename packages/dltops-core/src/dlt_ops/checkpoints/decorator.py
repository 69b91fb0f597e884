"""``@with_checkpoints``: persist pagination progress during extract, resume from it after a
failed extract.

Sits under ``@dlt.resource`` (closest to the generator function). On entry it opens the
checkpoint manager (adapter-gated), derives the isolation ``run_id`` from the incremental's
initial (or start) value, and moves the incremental's ``start_value`` to the furthest active
checkpoint minus ``offset_seconds``. Every page is counted; every ``frequency`` pages the page's
maximum cursor value is written in its own statement, outside dlt's load transaction. A clean
finish marks the namespace's rows completed and applies retention; a failure leaves them active.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from dlt_ops.adapters import check_identifier
from dlt_ops.checkpoints import finisher
from dlt_ops.checkpoints.manager import CheckpointManager
from dlt_ops.checkpoints.table import (
    DEFAULT_RUN_ID,
    DEFAULT_TABLE,
    apply_offset,
    count_records,
    cursor_of,
    isolation_run_id,
    serialize_value,
)
from dlt_ops.log import get_logger

log = get_logger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

#: Attribute set on the wrapper (tooling and tests read the options back from it).
OPTIONS_ATTR = "__dlt_ops_checkpoints__"


def _is_dlt_resource(obj: object) -> bool:
    return any(
        c.__name__ == "DltResource" and c.__module__.startswith("dlt.") for c in type(obj).__mro__
    )


def _find_incremental(sig: inspect.Signature, cursor_field: str, args: Any, kwargs: Any) -> Any:
    """The incremental dlt bound for this call: the ``cursor_field`` parameter first, then any
    argument that is an incremental, then an incremental parameter default."""
    from dlt.extract.incremental import Incremental

    try:
        arguments = sig.bind_partial(*args, **kwargs).arguments
    except TypeError:
        arguments = dict(kwargs)
    named = arguments.get(cursor_field)
    if isinstance(named, Incremental):
        return named
    for value in arguments.values():
        if isinstance(value, Incremental):
            return value
    param = sig.parameters.get(cursor_field)
    if param is not None and isinstance(param.default, Incremental):
        return param.default
    return None


def _resource_name(incremental: Any, fn: Callable[..., Any]) -> str:
    """The dlt resource name (``@dlt.resource(name=...)``), not the function's ``__name__``."""
    try:
        from dlt.extract.state import get_current_pipe_name

        return get_current_pipe_name()
    except Exception:
        return getattr(incremental, "resource_name", None) or fn.__name__


def _isolation(tag: str, incremental: Any) -> tuple[str | None, Any]:
    """``(run_id, the value it was derived from)`` per the seed's three cases."""
    if incremental is None:
        log.info(f"{tag} Run isolation: no incremental, run_id=NULL")
        return None, None
    value = incremental.initial_value
    if value is None:
        value = incremental.start_value
    if value is None:
        log.warning(
            f"{tag} Run isolation: the incremental has no initial or start value; "
            f"checkpoints use the shared run_id '{DEFAULT_RUN_ID}'"
        )
        return DEFAULT_RUN_ID, None
    run_id = isolation_run_id(value)
    log.info(f"{tag} Run isolation: value={serialize_value(value)}, run_id={run_id}")
    return run_id, value


def _ahead(current: Any, candidate: Any, pick: Callable[[list[Any]], Any]) -> bool:
    """Whether ``candidate`` lies beyond ``current`` in the cursor's direction."""
    if current is None:
        return True
    try:
        return candidate != current and pick([current, candidate]) == candidate
    except TypeError:  # e.g. naive vs aware: trust the checkpoint, as the seed does
        return True


def _resume(
    manager: CheckpointManager,
    incremental: Any,
    like: Any,
    offset_seconds: float,
    value_parser: Callable[[str], Any] | None,
) -> None:
    descending = getattr(incremental, "last_value_func", max) is min
    pick: Callable[[list[Any]], Any] = min if descending else max
    found = manager.resume_value(like=like, parser=value_parser, pick=pick)
    if found is None:
        return
    text, value = found
    adjusted = value if value_parser else apply_offset(value, offset_seconds, descending=descending)
    current = incremental.start_value
    if not _ahead(current, adjusted, pick):
        log.info(
            f"{manager.tag} Active checkpoint {text} is not ahead of the incremental's start "
            f"value {current}; not resuming from it",
            resource=manager.resource_name,
        )
        return
    incremental.start_value = adjusted
    log.info(
        f"{manager.tag} Resuming from checkpoint: {text} (adjusted: {adjusted})",
        resource=manager.resource_name,
        checkpoint_value=text,
    )
    from dlt_ops.ledger.resumes import Resume
    from dlt_ops.runner.context import current_run

    start = current if current is not None else getattr(incremental, "initial_value", None)
    resume = Resume.of(manager.resource_name, text, start, adjusted)
    run = current_run()
    if run is not None:  # onto the run's ledger row and receipt
        run.state.resumes.append(resume)
    log.warning(
        resume.describe(run.source if run is not None else "<source>"),
        resource=manager.resource_name,
        skipped_from=resume.skipped_from,
        resumed_from=resume.resumed_from,
    )


def with_checkpoints(
    cursor_field: str,
    frequency: int = 10,
    offset_seconds: float = 1,
    checkpoint_table: str = DEFAULT_TABLE,
    cleanup_days: int = 7,
    value_parser: Callable[[str], Any] | None = None,
) -> Callable[[F], F]:
    """Checkpoint a paginated resource's extraction progress in the destination.

    Args:
        cursor_field: name of the incremental parameter (and, unless the incremental names a
            ``cursor_path``, the field read from each page).
        frequency: write a checkpoint every this many pages (> 0).
        offset_seconds: safety overlap subtracted from a datetime checkpoint on resume (>= 0).
        checkpoint_table: destination table holding the rows (a plain SQL identifier).
        cleanup_days: completed rows of this pipeline and resource older than this many days
            are deleted after a clean finish (>= 0).
        value_parser: turns a stored string back into the cursor's type; with it no offset is
            applied on resume.

    Raises:
        TypeError: applied on top of ``@dlt.resource`` (it must sit under it), or on something
            that is not a function.
        ValueError: an option is out of range or ``checkpoint_table`` is not an identifier.
    """
    if not isinstance(cursor_field, str) or not cursor_field:
        raise ValueError("with_checkpoints: cursor_field must be a non-empty string")
    if isinstance(frequency, bool) or not isinstance(frequency, int) or frequency <= 0:
        raise ValueError(
            f"with_checkpoints: frequency must be positive (an int), got {frequency!r}"
        )
    if isinstance(cleanup_days, bool) or not isinstance(cleanup_days, int) or cleanup_days < 0:
        raise ValueError(
            f"with_checkpoints: cleanup_days must be non-negative (an int), got {cleanup_days!r}"
        )
    if not isinstance(offset_seconds, int | float) or offset_seconds < 0:
        raise ValueError(f"with_checkpoints: offset_seconds must be >= 0, got {offset_seconds!r}")
    if value_parser is not None and not callable(value_parser):
        raise ValueError("with_checkpoints: value_parser must be callable")
    check_identifier(checkpoint_table, subject="checkpoint_table")

    def decorate(fn: F) -> F:
        if _is_dlt_resource(fn):
            raise TypeError(
                "@with_checkpoints must be applied under @dlt.resource, not on top of it: "
                f"applied to the resource '{getattr(fn, 'name', fn)}', it would replace the "
                "resource with a plain generator and drop its name, write disposition and "
                "hints. Put @with_checkpoints directly above the def."
            )
        if not callable(fn) or inspect.isasyncgenfunction(fn):
            raise TypeError(
                f"@with_checkpoints decorates a resource's (sync) generator function, got {fn!r}"
            )
        sig = inspect.signature(fn)
        finisher.install()  # before any extract step starts, so the first one can hand off

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
            incremental = _find_incremental(sig, cursor_field, args, kwargs)
            resource = _resource_name(incremental, fn)
            yield from checkpointed_pages(
                lambda: fn(*args, **kwargs), incremental, resource, options
            )

        setattr(wrapper, OPTIONS_ATTR, options)
        return wrapper  # type: ignore[return-value]

    options = {
        "cursor_field": cursor_field,
        "frequency": frequency,
        "offset_seconds": offset_seconds,
        "checkpoint_table": checkpoint_table,
        "cleanup_days": cleanup_days,
        "value_parser": value_parser,
    }
    return decorate


def checkpointed_pages(
    pages: Callable[[], Iterable[Any]], incremental: Any, resource: str, options: dict[str, Any]
) -> Iterator[Any]:
    """The checkpointing loop of ``@with_checkpoints`` around ``pages()``.

    ``pages`` is called only after the resume moved ``incremental.start_value``, so a
    generator that reads ``start_value`` when it starts asks its API for the resumed range.
    ``options`` are :func:`with_checkpoints`' keyword arguments (already checked).
    """
    tag = f"[{resource}]"
    run_id, like = _isolation(tag, incremental)
    manager = CheckpointManager(
        resource,
        run_id,
        frequency=options["frequency"],
        checkpoint_table=options["checkpoint_table"],
        cleanup_days=options["cleanup_days"],
    )
    # adapter gate + table setup (left to the resume read when there is one): both fail
    # before any page is extracted
    manager.open(reads_first=incremental is not None)
    try:
        if incremental is not None:
            _resume(manager, incremental, like, options["offset_seconds"], options["value_parser"])
        path = getattr(incremental, "cursor_path", None) or options["cursor_field"]
        for page in pages():
            # the cursor is read only on pages that will be checkpointed
            value = cursor_of(page, path) if manager.next_is_checkpoint else None
            records = count_records(page)
            yield page
            manager.page(records, value)  # after dlt accepted the page
    except GeneratorExit:
        manager.flush()
        log.info(f"{tag} Extraction closed early; active checkpoints kept")
        raise
    except BaseException as exc:
        manager.flush()  # checkpoints already handed over land before the run fails
        log.warning(
            f"{tag} Extraction failed after page {manager.page_count}; active "
            f"checkpoints kept as resume state ({type(exc).__name__})",
            resource=resource,
        )
        raise
    else:
        manager.finish()
    finally:
        manager.close()
