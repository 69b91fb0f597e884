"""Resource lists for ``pipeline list`` / ``pipeline resources``, including run-time ones.

The Phase-1 scan sees ``@dlt.resource`` definitions only. dlt's own sources
(``sql_database``/``sql_table``, ``rest_api``, ``filesystem``) build their resources when the
source function runs, so their static list is empty. For those, the list comes from Phase 2:
the facts cache when it is still valid (no import, no dlt), else one sandboxed import and
instantiation (:func:`~dlt_ops.project.introspect.introspect`), whose facts are cached for the
next call exactly as validate caches them. Names that Phase 1 did not see are marked as
discovered at run time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dlt_ops.log import get_logger

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig
    from dlt_ops.project.facts import SourceFacts
    from dlt_ops.project.model import Project, SourceInfo

log = get_logger(__name__)


@dataclass(frozen=True)
class ResourceListing:
    """One source's resources: every name, those found only at run time, and any failure.

    ``error`` says why the run-time look failed (the list is then the static one)."""

    names: tuple[str, ...]
    runtime: frozenset[str] = field(default_factory=frozenset)
    error: str | None = None


def _static(info: SourceInfo) -> ResourceListing:
    return ResourceListing(info.static_resources)


def _from_names(info: SourceInfo, names: Iterable[str]) -> ResourceListing:
    names = tuple(names)
    return ResourceListing(names, frozenset(set(names) - set(info.static_resources)))


def resource_listings(
    project: Project,
    config: ProjectConfig,
    names: Iterable[str] | None = None,
    *,
    look: bool = True,
    refresh: bool = False,
    live_reflected: bool = False,
) -> dict[str, ResourceListing]:
    """Listings for ``names`` (default: every source).

    A valid facts-cache entry wins (it is what validate and the last run saw), except that
    ``refresh`` looks again live at every source the cache or an empty static list sends to
    Phase 2, and ``live_reflected`` does so for sources whose cached resources were built from
    what a database holds (``sql_database`` reflects its tables when the source runs, so a
    table added since is not in the cache). Without an entry, a source whose static list is
    empty is imported in the sandbox and instantiated when ``look`` is true; every other source
    keeps its static list, never importing anything. A live look that fails falls back to the
    cached list when there is one.
    """
    from dlt_ops.project.facts_cache import FactsCache, FactsKeys
    from dlt_ops.project.sandbox import module_digest

    selected = [project.sources[n] for n in (names if names is not None else project.sources)]
    cache, keys = FactsCache(project.root), FactsKeys(project)
    out: dict[str, ResourceListing] = {}
    todo: dict[str, SourceFacts | None] = {}
    for info in selected:
        try:
            digest = module_digest(project.root, info.pipeline_dir, info.module_path)
            facts = cache.get(info, keys.key(info, digest))
        except OSError:
            facts = None
        if facts is not None and (refresh or (live_reflected and reflected(facts))):
            todo[info.name] = facts
        elif facts is not None:
            out[info.name] = _from_names(info, facts.resource_names)
        elif (look or refresh) and not info.static_resources:
            todo[info.name] = None
        else:
            out[info.name] = _static(info)
    if todo:
        out.update(_look(project, config, todo))
    return {info.name: out[info.name] for info in selected}


def reflected(facts: SourceFacts) -> bool:
    """Whether any of the source's resources was built by reflecting a database."""
    return any(r.builder == "sql_database" for r in facts.resources)


def _look(
    project: Project, config: ProjectConfig, todo: dict[str, SourceFacts | None]
) -> dict[str, ResourceListing]:
    """Phase 2 for ``todo``'s sources, live: sandbox, import, instantiate; facts land in the
    cache. ``todo`` maps each name to its cached facts (``None``: none), the fallback."""
    from dlt_ops.project.introspect import introspect
    from dlt_ops.redact import redact

    out = {}
    for name, result in introspect(project, config, list(todo)).items():
        info = project.sources[name]
        if result.facts is not None:
            out[name] = _from_names(info, result.facts.resource_names)
            continue
        error = redact(result.import_error or result.instantiate_error or "not instantiated")
        log.info("resources.runtime_look_failed", source=name, error=error)
        cached = todo[name]
        if cached is not None:
            listed = _from_names(info, cached.resource_names)
            out[name] = ResourceListing(listed.names, listed.runtime, f"{error} (listed from the "
                                        f"cache of an earlier look)")  # fmt: skip
        else:
            out[name] = ResourceListing(info.static_resources, error=error)
    return out
