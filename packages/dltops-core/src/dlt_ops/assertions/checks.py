"""Type-aware assertion checks, type loading and predicate resolution.

One function, :func:`check_specs`, decides whether a parsed assertion config is valid against
the installed plugins; ``validate`` (rules ``assertion_config_valid`` and
``assertion_columns_exist``), the runtime preflight and the gate all call it, so they cannot
disagree.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Collection, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dlt_ops.assertions.model import (
    ASSERTION_RULE,
    RESERVED_KEYS,
    AssertionContext,
    Issue,
    OnFailure,
    ParsedAssertions,
)
from dlt_ops.errors import DltOpsError, PluginLoadError, UnknownPluginError

if TYPE_CHECKING:
    from collections.abc import Iterator

    from dlt_ops.plugins import PluginRegistry

KIND = "assertion_rule"
_REQUIRED = ("check_config", "start", "observe", "finalize")


def load_type(registry: PluginRegistry, name: str) -> Any:
    """The registered assertion type ``name``, instantiated when a class was registered.

    Raises ``UnknownPluginError`` / ``PluginLoadError`` from the registry, and
    ``PluginLoadError`` when the object does not satisfy the assertion-type protocol.
    """
    obj = registry.get(ASSERTION_RULE, name)
    if isinstance(obj, type):
        obj = obj()
    missing = [m for m in _REQUIRED if not callable(getattr(obj, m, None))]
    if missing or not isinstance(getattr(obj, "row_scoped", None), bool):
        what = f"missing {', '.join(missing)}" if missing else "row_scoped is not a bool"
        raise PluginLoadError(KIND, name, type(obj).__qualname__,
                              f"not an assertion type ({what})")  # fmt: skip
    return obj


def plugin_label(registry: PluginRegistry, type_name: str) -> str:
    """Who registered assertion type ``type_name`` (entry point and distribution or module),
    for messages about a misbehaving type; call after :func:`load_type`."""
    for reg in registry.registrations(KIND):
        if reg.name == type_name:
            return f"{reg.source.name}, {reg.source.origin}"
    return "unknown plugin"


@contextmanager
def _project_on_path(root: Path | None) -> Iterator[None]:
    if root is None or str(root) in sys.path:
        yield
        return
    sys.path.insert(0, str(root))
    try:
        yield
    finally:
        try:
            sys.path.remove(str(root))
        except ValueError:
            pass


def resolve_predicate(spec: str, project_root: Path | None = None) -> Callable[[Any], Any]:
    """Import ``module:attr`` (or dotted ``module.attr``); project-local modules resolve
    relative to ``project_root``. Raises ``ImportError``/``AttributeError``/``TypeError``."""
    if ":" in spec:
        module_name, attr = spec.split(":", 1)
    else:
        module_name, _, attr = spec.rpartition(".")
        if not module_name:
            raise ImportError(f"predicate '{spec}' names no module; use 'module:attr'")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError:
        with _project_on_path(project_root):
            module = importlib.import_module(module_name)
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part)
    if not callable(obj):
        raise TypeError(f"predicate '{spec}' is a {type(obj).__name__}, not a callable")
    return obj


def _ctx(source: str, resource: str, columns: tuple[str, ...] | None) -> AssertionContext:
    return AssertionContext(source, resource, columns)


def _messages(
    atype: Any, params: Mapping[str, Any], ctx: AssertionContext, plugin: str
) -> list[str]:
    try:
        return [str(m) for m in atype.check_config(params, ctx) or ()]
    except Exception as exc:  # a plugin bug is a finding, never a crash
        return [f"check_config of plugin {plugin} raised {type(exc).__name__}: {exc}"]


def check_specs(
    parsed: ParsedAssertions,
    registry: PluginRegistry,
    *,
    resources: Collection[str] | None = None,
    declared: Mapping[str, tuple[str, ...] | None] | None = None,
    only: Collection[str] | None = None,
) -> tuple[list[Issue], list[Issue]]:
    """``(config_issues, column_issues)`` for ``parsed``.

    ``resources`` are the source's live resource names (unknown ones are issues; ``None``
    skips that check). ``declared`` maps a resource to its model's column names, for the
    column check. ``only`` limits checks to the selected resources (the preflight's view).
    Structural issues from parsing are included in ``config_issues``.
    """
    issues = list(parsed.issues)
    columns: list[Issue] = []
    squatters = sorted(RESERVED_KEYS & set(registry.names(KIND)))
    for name in squatters:
        message = f"an installed plugin registers the reserved name '{name}' as an assertion type"
        issues.append(Issue("assertions", message + "; uninstall it"))
    loaded: dict[str, Any] = {}
    for res in parsed.resources:
        if resources is not None and res.resource not in resources:
            known = ", ".join(sorted(resources)) or "none"
            issues.append(Issue(f"assertions.{res.resource}",
                                f"source '{parsed.source}' has no resource '{res.resource}' "
                                f"(its resources: {known})"))  # fmt: skip
            continue
        if only is not None and res.resource not in only:
            continue
        for spec in res.specs:
            if spec.on_failure is not OnFailure.fail and spec.threshold.active:
                issues.append(Issue(spec.field, "max_violations / max_violation_ratio apply to "
                                    f"on_failure = \"fail\" only (this one is "
                                    f"\"{spec.on_failure}\")"))  # fmt: skip
            if spec.is_custom:
                continue
            if spec.type_name not in loaded:
                try:
                    loaded[spec.type_name] = load_type(registry, spec.type_name)
                except UnknownPluginError as exc:
                    loaded[spec.type_name] = None
                    issues.append(Issue(spec.field,
                                        f"unknown assertion type '{spec.type_name}' "
                                        f"(registered: {', '.join(exc.known) or 'none'}); see "
                                        f"`dlt-ops plugins doctor`"))  # fmt: skip
                except DltOpsError as exc:
                    loaded[spec.type_name] = None
                    issues.append(Issue(spec.field, str(exc)))
            atype = loaded[spec.type_name]
            if atype is None:
                continue
            if not atype.row_scoped and spec.on_failure is OnFailure.quarantine:
                issues.append(Issue(spec.field,
                                    f"'{spec.type_name}' is batch-scoped; on_failure = "
                                    f"\"quarantine\" is invalid — there are no specific rows "
                                    f"to quarantine when a batch verdict fails"))  # fmt: skip
            plugin = plugin_label(registry, spec.type_name)
            ctx = _ctx(parsed.source, res.resource, None)
            plain = _messages(atype, spec.params, ctx, plugin)
            issues += [Issue(spec.field, m) for m in plain]
            cols = (declared or {}).get(res.resource)
            if cols is not None:
                ctx = _ctx(parsed.source, res.resource, cols)
                with_cols = _messages(atype, spec.params, ctx, plugin)
                columns += [Issue(spec.field, m) for m in with_cols if m not in plain]
    return issues, columns
