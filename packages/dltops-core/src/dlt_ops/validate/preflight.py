"""The runtime preflight (reference Tier 2): re-checked on every run and backfill chunk.

Not configurable and without rule ids: these are the conditions under which a run would fail
halfway or silently do less than asked, so it is refused before extract instead.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from dlt_ops.errors import (
    DltOpsError,
    IncrementalWindowError,
    MissingIncrementalCursorError,
    PluginLoadError,
    PluginLoadFailedError,
    PluginNotRegisteredError,
    UnknownPluginError,
    UnknownRuleIdError,
)
from dlt_ops.log import get_logger
from dlt_ops.validate.capability import (
    ADAPTER_GATED_FEATURES,
    DestinationCheck,
    check_destination,
    engaged_by_config,
)

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.project import SourceInfo

log = get_logger(__name__)

_RESERVED_ASSERTION_KEYS = {"on_failure", "custom", "max_violations", "max_violation_ratio"}


@dataclass(frozen=True)
class PreflightReport:
    """What a passed preflight established, for the runner to use."""

    destination: DestinationCheck
    secret_backend: str
    engaged_features: tuple[str, ...]
    notices: tuple[str, ...] = field(default=())

    @property
    def tier(self) -> str:
        """``full`` (an adapter is registered) or ``core``."""
        return self.destination.tier


def _selected(selection: Any) -> list[Any]:
    """The selected resources of a ``DltSource``, or the given resources."""
    if selection is None:
        return []
    selected = getattr(selection, "selected_resources", None)
    if selected is not None:
        return list(selected.values())
    if isinstance(selection, dict):
        return list(selection.values())
    return list(selection)


def _check_rule_ids(config: ProjectConfig, registry: PluginRegistry) -> None:
    from dlt_ops.validate.engine import resolve_catalog

    catalog = resolve_catalog(registry, dict(config.rules))
    if catalog.unknown_switches:
        raise UnknownRuleIdError(
            f"unknown rule id(s) in [dlt_ops.rules]: {', '.join(catalog.unknown_switches)}; "
            f"valid rule ids: {', '.join(sorted(catalog.rules))}. Fix the key in "
            f"{config.path} (`dlt-ops pipeline validate --show-resolved-rules` lists them)."
        )


def _need(
    registry: PluginRegistry,
    kind: str,
    name: str,
    needed_by: str,
    lookup: Callable[[], object] | None = None,
) -> None:
    try:
        lookup() if lookup is not None else registry.get(kind, name)
    except PluginLoadError as exc:
        raise PluginLoadFailedError(kind, name, exc.cause) from exc
    except UnknownPluginError as exc:
        raise PluginNotRegisteredError(kind, name, exc.known, needed_by) from exc


def _check_alert_sinks(config: ProjectConfig, registry: PluginRegistry) -> None:
    from dlt_ops.alerts.dispatch import KIND, configured_sinks, sink_factory

    for name in configured_sinks(config):
        lookup = functools.partial(sink_factory, registry, config, name)
        _need(registry, KIND, name, "[dlt_ops] alert_sinks", lookup)


def _check_assertion_types(
    config: ProjectConfig, registry: PluginRegistry, source: str, resources: Iterable[str]
) -> None:
    tables = config.source(source).assertions or {}
    for resource in resources:
        table = tables.get(resource)
        if not isinstance(table, dict):
            continue
        for key in table:
            if key not in _RESERVED_ASSERTION_KEYS:
                needed_by = f"[sources.{source}.dlt_ops.assertions.{resource}]"
                _need(registry, "assertion_rule", key, needed_by)


def check_window_incrementals(resources: Iterable[Any]) -> None:
    """Every resource has an incremental dlt can bound to an external ``[from, to)`` window.

    Raises ``MissingIncrementalCursorError`` (exit 1) when one has no incremental at all and
    ``IncrementalWindowError`` (exit 2) when dlt would refuse to join the window (no datetime
    ``initial_value``, a string cursor, ``allow_external_schedulers=False``): asked of dlt's
    own join on a copy of each incremental, so a backfill fails here and not in chunk 1.
    """
    from dlt_ops.project.facts import builder_of
    from dlt_ops.project.incrementals import incremental_of, window_fix, window_problem

    resources = list(resources)
    found = {r.name: incremental_of(r) for r in resources}
    missing = [name for name, inc in found.items() if inc is None]
    if missing:
        raise MissingIncrementalCursorError(missing)
    problems = []
    for r in resources:
        why = window_problem(found[r.name], r.name)  # type: ignore[arg-type]
        if why is not None:
            problems.append((r.name, why, window_fix(found[r.name], builder_of(r))))
    if problems:
        raise IncrementalWindowError(problems)


def run_preflight(
    config: ProjectConfig,
    registry: PluginRegistry,
    source: SourceInfo,
    selection: Any = None,
    *,
    window: bool = False,
    engaged_features: Collection[str] = (),
) -> PreflightReport:
    """Refuse a run before extract when it cannot succeed as asked.

    Call it after ``source_fn()`` (and ``with_resources``) and before building the dlt
    pipeline, for every plain run and every backfill chunk (backfill also calls it once up
    front with ``engaged_features={"backfill"}``).

    Args:
        config: the project config.
        registry: the command's plugin registry (with the project's picks).
        source: the Phase-1 ``SourceInfo`` of the source (``load_source(...).info``).
        selection: the instantiated ``DltSource`` (its ``selected_resources`` are checked),
            or an iterable/mapping of ``DltResource``; ``None`` skips per-resource checks.
        window: ``True`` when the run has ``--from/--to`` bounds (backfill chunks, windowed
            runs): every selected resource must then have an incremental cursor.
        engaged_features: adapter-gated features the caller is about to use, from
            :data:`~dlt_ops.validate.capability.ADAPTER_GATED_FEATURES` (e.g. ``"backfill"``,
            ``"runs ledger and status"`` when the destination ledger is mandatory). Features
            engaged by config and code are added automatically: ``require_destination_adapter``,
            ``@with_checkpoints`` (static detection), ``on_failure = "quarantine"`` on a
            selected resource.

    Checks, in order: (1) every id in ``[dlt_ops.rules]`` is a registered rule; (2) the
    destination resolves, its adapter loads and is complete, and adapter-gated features are
    engaged only with an adapter; (3) the source's secret backend is registered, loads and
    can serve it (the check the reference forgot to call); (4) configured alert sinks and
    (5) assertion types of selected resources are registered and load; (6) with ``window``,
    every selected resource has an incremental cursor that dlt can bound to the window
    (:func:`check_window_incrementals`).

    Returns:
        A :class:`PreflightReport` (destination tier and adapter, secret backend name, the
        engaged features, and the core-mode notice when there is no adapter).

    Raises:
        UnknownRuleIdError, DestinationNotResolvableError, PluginLoadFailedError,
        AdapterCapabilityError, DestinationCapabilityError, SecretBackendError,
        PluginNotRegisteredError, MissingIncrementalCursorError — all ``PreflightError``
        (exit code 1) but ``IncrementalWindowError`` (exit 2);
        ``UnresolvedDestinationError`` (a ``ConfigError``, exit 2) when no
        destination is configured, and ``PluginConflictError`` when two plugins claim a name.
    """
    from dlt_ops.secrets import resolve_secret_backend

    resources = _selected(selection)
    names = [r.name for r in resources]
    unknown = sorted(set(engaged_features) - set(ADAPTER_GATED_FEATURES))
    if unknown:
        raise DltOpsError(f"run_preflight: unknown engaged feature(s): {', '.join(unknown)}")
    _check_rule_ids(config, registry)
    engaged = list(dict.fromkeys([
        *engaged_features,
        *engaged_by_config(config, source.name, source.uses_checkpoints,
                           names if selection is not None else None),
    ]))  # fmt: skip
    destination = check_destination(config, registry, source.name, engaged)
    backend, _ = resolve_secret_backend(config, registry, source.name)
    _check_alert_sinks(config, registry)
    _check_assertion_types(config, registry, source.name, names)
    if window:
        check_window_incrementals(resources)
    notices = (destination.notice,) if destination.notice else ()
    for notice in notices:
        log.warning("preflight.core_mode", notice=notice)
    return PreflightReport(destination, backend, tuple(engaged), notices)
