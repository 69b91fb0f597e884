"""A live resource's incremental, found without running it, and whether it takes a window.

dlt's own sources hand their incremental to the generator as an argument (``sql_table(...,
incremental=...)``, rest_api's ``incremental_object``), so ``resource.incremental`` is an empty
wrapper until extract starts. :func:`incremental_of` looks where dlt will look: hints set with
``apply_hints``, then the bound call arguments, then the parameter default, then the parent
resource's (``filesystem(...) | read_csv()``).

:func:`window_problem` asks the question a backfill chunk or a ``--from/--to`` run asks: can
dlt join an external ``[from, to)`` window onto this incremental? It runs dlt's own join on a
copy, so the answer is dlt's, not a re-implementation. Imported only where dlt is loaded.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

#: The window used to probe an incremental when no real one is at hand (validate).
PROBE_WINDOW = (datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 2, tzinfo=UTC))


@dataclass(frozen=True)
class FoundIncremental:
    """An incremental and the annotation of the parameter it will be passed through."""

    incremental: Any
    annotation: Any = None


def _incremental_param(fn: Any) -> inspect.Parameter | None:
    from dlt.extract.incremental import IncrementalResourceWrapper

    try:
        return IncrementalResourceWrapper.get_incremental_arg(inspect.signature(fn))
    except (TypeError, ValueError):
        return None


#: Where ``rest_api_checkpoints`` keeps the data step it wrapped (looked through here, so
#: the incremental of a checkpointed rest_api resource is still found).
ORIGINAL_GEN_ATTR = "__dlt_ops_original_gen__"


def _from_call(gen: Any) -> FoundIncremental | None:
    """The incremental bound into a ``resource(...)`` call, or its parameter default."""
    from dlt.extract.incremental import Incremental

    gen = getattr(gen, ORIGINAL_GEN_ATTR, gen)  # look through rest_api_checkpoints' wrapper
    try:
        bound = inspect.getclosurevars(gen).nonlocals
    except (TypeError, ValueError):
        return None
    fn = bound.get("f")
    if not callable(fn):
        return None
    param = _incremental_param(fn)
    if param is None:
        return None
    annotation = param.annotation if param.annotation is not inspect.Parameter.empty else None
    args, kwargs = bound.get("args") or (), bound.get("kwargs") or {}
    try:
        arguments = inspect.signature(fn).bind_partial(*args, **kwargs).arguments
    except TypeError:
        arguments = dict(kwargs)
    value = arguments.get(param.name, param.default)
    if isinstance(value, Incremental):
        if isinstance(param.default, Incremental) and value is not param.default:
            value = param.default.merge(value)  # dlt merges an explicit one into the default
        return FoundIncremental(value, annotation)
    return None


def incremental_of(resource: Any) -> FoundIncremental | None:
    """The incremental ``resource`` will extract with, ``None`` when it has none."""
    from dlt.extract.incremental import Incremental, IncrementalResourceWrapper

    seen: set[int] = set()
    while resource is not None and id(resource) not in seen:
        seen.add(id(resource))
        step = getattr(resource, "incremental", None)
        if isinstance(step, Incremental):
            return FoundIncremental(step)
        if isinstance(step, IncrementalResourceWrapper):
            if step.incremental is not None:
                return FoundIncremental(step.incremental)
            pipe = getattr(resource, "_pipe", None)
            found = _from_call(pipe.gen) if pipe is not None else None
            if found is not None:
                return found
        resource = getattr(resource, "_parent", None)
    return None


def window_problem(
    found: FoundIncremental, name: str, window: tuple[datetime, datetime] = PROBE_WINDOW
) -> str | None:
    """Why dlt could not bound ``found`` to ``window`` (``None`` when it can)."""
    incremental = found.incremental
    if incremental.allow_external_schedulers is False:
        return (
            "its incremental sets allow_external_schedulers=False, so dlt would ignore the "
            "window and load the whole range in every chunk"
        )
    try:
        from dlt.extract.incremental.context import TimeIntervalContext

        probe = incremental.copy()
        join = probe._join_external_scheduler
    except (ImportError, AttributeError):  # a dlt without these: let dlt decide at run time
        return None
    orig = getattr(incremental, "__orig_class__", None) or found.annotation
    if orig is not None:
        try:
            probe.__orig_class__ = orig
        except (AttributeError, TypeError):
            pass
    probe.resource_name = name
    try:
        join(TimeIntervalContext(interval=window, allow_external_schedulers=True))
    except Exception as exc:  # dlt's JoinSchedulerError and coercion failures
        return _explain(exc, incremental)
    return None


def _explain(exc: Exception, incremental: Any) -> str:
    initial = incremental.initial_value
    if initial is None:
        why = "its incremental has no initial_value, so dlt cannot tell the cursor's type"
    elif isinstance(initial, str):
        why = f"its initial_value is the string {initial!r}, which dlt never compares to datetimes"
    else:
        why = f"dlt cannot bound its cursor of type {type(initial).__name__} by datetimes"
    detail = " ".join(str(exc).split())[:300]
    return f"{why} ({type(exc).__name__}: {detail})"


def window_fix(found: FoundIncremental | None, builder: str | None = None) -> str:
    """The fix for :func:`window_problem`'s complaint, in the words of the resource's author."""
    if found is not None and found.incremental.allow_external_schedulers is False:
        return "drop allow_external_schedulers=False from its incremental"
    cursor = (getattr(found.incremental, "cursor_path", None) if found else None) or "<cursor>"
    if builder == "rest_api":
        return (
            'in its rest_api "incremental" give "initial_value" a datetime object (not an ISO '
            "string) and turn the cursor field into a datetime before the incremental sees it: "
            '"processing_steps": [{"map": <a function parsing ' + repr(cursor) + ">}] "
            "(docs/dlt-sources.md has the recipe)"
        )
    return (
        f'give initial_value a datetime: dlt.sources.incremental("{cursor}", '
        "initial_value=datetime(2026, 1, 1, tzinfo=timezone.utc))"
    )
