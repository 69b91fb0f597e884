"""0.1's project-level Python functions, with 0.1's signatures, on this version's services.

0.1 took a project root and returned its own result types; these take the same arguments and
return this version's types (``SourceInfo``, ``Finding``, ``SourceReport``), whose fields the
migration guide maps. Each loads the project's config first, as every command does, so
redaction is armed before a source's secrets can be printed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dlt_ops.project.legacy_source_info import LegacySourceInfo
    from dlt_ops.reconcile.model import SourceReport
    from dlt_ops.validate.framework import Finding


def _project(project_root: Path | str | None) -> tuple[Any, Any]:
    """``(config, registry)`` of the project at or above ``project_root`` (the cwd)."""
    from dlt_ops.config import find_project_root, load_project_config
    from dlt_ops.destinations import project_registry

    explicit = Path(project_root) if project_root is not None else None
    config = load_project_config(find_project_root(explicit))
    return config, project_registry(config)


def discover_sources(project_root: Path | str) -> dict[str, LegacySourceInfo]:
    """The project's sources by name, as 0.1 records (a static scan: a source's module is
    imported only when its ``source_fn`` is asked for)."""
    import functools

    from dlt_ops.project.discovery import discover
    from dlt_ops.project.legacy_source_info import LegacySourceInfo

    config, _ = _project(project_root)
    project = discover(config.root)

    def load(name: str) -> Any:
        from dlt_ops.project.introspect import load_source

        return load_source(project, config, name).source_fn

    found = {}
    for name, info in project.sources.items():
        found[name] = LegacySourceInfo(
            name, info.pipeline, info.module_path, info.function_name,
            resources=info.static_resources, uses_checkpoints=info.uses_checkpoints,
            config=config.sources.get(name), record=info, load=functools.partial(load, name),
        )  # fmt: skip
    return found


def validate_sources(
    project_root: Path | str, *, validators: Sequence[Any] | None = None, strict: bool = False
) -> list[Finding]:
    """``pipeline validate``'s findings for the project (``strict``: warnings as errors).

    ``validators=`` (0.1's custom list) runs exactly those callables instead of the rules,
    each on 0.1's context (:class:`dlt_ops.validate.legacy_context.LegacyValidationContext`).
    A config value of the wrong type is returned as the one finding, as 0.1 did (no rule can
    run on a config that does not load).
    """
    from dlt_ops.errors import ConfigValueError
    from dlt_ops.project.discovery import discover
    from dlt_ops.validate.engine import validate_project
    from dlt_ops.validate.framework import Finding

    try:
        config, registry = _project(project_root)
    except ConfigValueError as exc:  # 0.1 listed a bad value with the findings; the CLI exits 2
        table, _, key = exc.key.strip("[").partition("] ")
        return [Finding(f"{table}.{key}" if key else table, key, str(exc))]
    project = discover(config.root)
    if validators is not None:
        from dlt_ops.compat.validators import legacy_context, run_validators

        return run_validators(legacy_context(config, project.sources), validators)
    return list(validate_project(config, registry, project, strict=strict).findings)


def _reconcile(
    sources: tuple[str, ...], *, every: bool, removal: bool, dry_run: bool, root: Any
) -> list[SourceReport]:
    from dlt_ops.reconcile.service import ReconcileRequest, reconcile

    config, registry = _project(root)
    request = ReconcileRequest(
        sources=sources, all_sources=every, include_removal=removal, dry_run=dry_run
    )
    return reconcile(registry, config, request).reports


def reconcile_source(
    source_name: str, *, dry_run: bool = False, project_root: Path | str | None = None
) -> SourceReport:
    """Additive schema drift of one source (``pipeline reconcile -s``)."""
    (report,) = _reconcile((source_name,), every=False, removal=False, dry_run=dry_run,
                           root=project_root)  # fmt: skip
    return report


def reconcile_all(
    *, dry_run: bool = False, project_root: Path | str | None = None
) -> list[SourceReport]:
    """Additive schema drift of every source (``pipeline reconcile --all``)."""
    return _reconcile((), every=True, removal=False, dry_run=dry_run, root=project_root)


def detect_removal(
    source_name: str, *, dry_run: bool = False, project_root: Path | str | None = None
) -> SourceReport:
    """Additive and removal drift of one source (``reconcile -s X --include-removal``)."""
    (report,) = _reconcile((source_name,), every=False, removal=True, dry_run=dry_run,
                           root=project_root)  # fmt: skip
    return report
