"""Phase 2: sandbox-check source modules, import the clean ones, attach and instantiate sources.

The runner uses :func:`load_source` (one source, typed errors); ``validate`` uses
:func:`introspect` (many sources, failures kept as data so every problem is reported). An
instantiated source is summarised as :class:`~dlt_ops.project.facts.SourceFacts`, which the
rules read; with ``cached_facts=True`` a source whose facts are cached and still valid is not
imported at all (when every source hits, neither is dlt).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from dlt_ops.config import ProjectConfig
from dlt_ops.errors import ImportSafetyError, SourceImportEnvironmentError, SourceImportError
from dlt_ops.log import get_logger
from dlt_ops.project.facts import SourceFacts, extract
from dlt_ops.project.facts_cache import FactsCache, FactsKeys
from dlt_ops.project.loader import forget_project_modules, import_source_module, use_project_dir
from dlt_ops.project.model import Project, SourceInfo
from dlt_ops.project.sandbox import (
    DEFAULT_TIMEOUT_S,
    ModuleJob,
    Verdict,
    module_digest,
    verdicts,
)
from dlt_ops.redact import redact

log = get_logger(__name__)


@dataclass
class Introspection:
    """Phase-2 outcome for one source.

    ``import_error`` explains why the source is unusable (parse error, sandbox violations,
    raised at import, function missing); when it is ``None``, ``source_fn`` is the decorated
    ``@dlt.source`` function. With ``instantiate=True``, ``source`` is ``source_fn()`` (a
    ``DltSource``) or ``instantiate_error`` says why calling it failed (e.g. missing secrets).
    ``facts`` summarises the instantiated source for the rules; ``facts_cached`` says they came
    from the facts cache, in which case nothing was imported and ``module``, ``source_fn`` and
    ``source`` are ``None``.
    """

    info: SourceInfo
    verdict: Verdict | None = None
    import_error: str | None = None
    module: ModuleType | None = None
    source_fn: Callable[..., Any] | None = None
    source: Any = None
    instantiate_error: str | None = None
    facts: SourceFacts | None = None
    facts_cached: bool = False

    @property
    def imported(self) -> bool:
        """The module imported cleanly and the source function exists."""
        return self.source_fn is not None

    @property
    def live_resources(self) -> tuple[str, ...] | None:
        """Resource names of the instantiated source, ``None`` when not instantiated."""
        if self.facts is not None:
            return self.facts.resource_names
        if self.source is None:
            return None
        return tuple(self.source.resources.keys())


def sandbox_enabled(config: ProjectConfig) -> bool:
    """``[dlt_ops.rules] import_safety = false`` is the only way to turn the sandbox off."""
    return config.rules.get("import_safety") is not False


def introspect(
    project: Project,
    config: ProjectConfig,
    names: Iterable[str] | None = None,
    *,
    instantiate: bool = True,
    timeout: float = DEFAULT_TIMEOUT_S,
    use_cache: bool = True,
    cached_facts: bool = False,
    on_module: Callable[[Path, Verdict], None] | None = None,
) -> dict[str, Introspection]:
    """Phase 2 over ``names`` (default: every source); never raises for a broken source.

    With ``instantiate`` and ``use_cache``, the facts of every instantiated source are written
    to the facts cache; with ``cached_facts`` too, a source whose cached facts are still valid
    is answered from the cache instead of being imported and instantiated.
    """
    selected = [project.sources[n] for n in (names if names is not None else project.sources)]
    use_project_dir(project.root, refresh=instantiate)
    forget_project_modules(project.root)  # files may have changed since an earlier call
    modules = {s.module_path: s for s in selected}
    digests = {p: module_digest(project.root, s.pipeline_dir, p) for p, s in modules.items()}
    found: dict[Path, Verdict] = {}
    if sandbox_enabled(config) and modules:
        jobs = [
            ModuleJob(project.root, s.pipeline, path, digests[path]) for path, s in modules.items()
        ]
        found = verdicts(
            jobs,
            timeout=timeout,
            use_cache=use_cache,
            on_done=(lambda job, v: on_module(job.module, v)) if on_module else None,
        )
    cache = FactsCache(project.root) if instantiate and use_cache else None
    keys = FactsKeys(project) if cache is not None else None
    imported: dict[Path, ModuleType | str] = {}
    out: dict[str, Introspection] = {}
    for info in selected:
        result = Introspection(info=info, verdict=found.get(info.module_path))
        out[info.name] = result
        verdict = result.verdict
        if verdict is not None and not verdict.clean:
            result.import_error = _verdict_error(verdict, project.root)
            continue
        key = keys.key(info, digests[info.module_path]) if keys is not None else ""
        if cache is not None and cached_facts:
            result.facts = cache.get(info, key)
            if result.facts is not None:
                result.facts_cached = True
                continue
        _load(result, imported, project.root, instantiate)
        if cache is not None:
            cache.put(info, key, result.facts)
    if cache is not None:
        cache.save()
    return out


def _load(
    result: Introspection, imported: dict[Path, ModuleType | str], root: Path, instantiate: bool
) -> None:
    """Import the source's module (once per module), find its function, maybe call it."""
    info = result.info
    if info.module_path not in imported:
        try:
            imported[info.module_path] = import_source_module(root, info.pipeline, info.module_path)
        except BaseException as exc:  # noqa: B036 - user code may raise SystemExit
            imported[info.module_path] = f"module raised at import: {_describe(exc)}"
    module = imported[info.module_path]
    if isinstance(module, str):
        result.import_error = module
        return
    result.module = module
    fn = getattr(module, info.function_name, None)
    if not callable(fn):
        result.import_error = f"module loaded but '{info.function_name}' is missing or not callable"
        return
    result.source_fn = fn
    if instantiate:
        _instantiate(result, fn)


def _instantiate(result: Introspection, fn: Callable[..., Any]) -> None:
    from dlt_ops.config.secret_values import remember_secrets_file, watch_dlt_secrets

    # calling the source resolves its secrets: any message quoting one must come out masked
    remember_secrets_file(result.info.pipeline_dir.parent / ".dlt" / "secrets.toml")
    watch_dlt_secrets()
    try:
        result.source = fn()
    except Exception as exc:
        result.instantiate_error = _describe(exc)
        log.warning("introspect.instantiate_failed", source=result.info.name,
                    error=result.instantiate_error)  # fmt: skip
        return
    try:
        result.facts = extract(result.source)
    except Exception as exc:  # a resource dlt cannot describe: report it, keep going
        result.source = None
        result.instantiate_error = f"cannot inspect its resources: {_describe(exc)}"


def _describe(exc: BaseException) -> str:
    text = " ".join(redact(str(exc)).split())
    return f"{type(exc).__name__}: {text[:400]}"


def _verdict_error(verdict: Verdict, root: Path) -> str:
    if verdict.sandbox_error:
        return f"import-safety check failed: {verdict.sandbox_error}"
    if verdict.violations:
        listed = "; ".join(v.describe(root) for v in verdict.violations[:5])
        return (
            f"not imported: violates import safety at import time: {listed}. Move that work "
            f"into the source or resource function, or opt out with [dlt_ops.rules] "
            f"import_safety = false."
        )
    return str(verdict.import_error)


def load_source(
    project: Project,
    config: ProjectConfig,
    name: str,
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
) -> Introspection:
    """Sandbox-check and import one source for a run; raises a typed error when unusable.

    Raises :class:`~dlt_ops.errors.UnknownSourceError` / ``DuplicateSourceError`` for a bad
    name, :class:`~dlt_ops.errors.ImportSafetyError` when the module has import-time side
    effects, :class:`~dlt_ops.errors.SourceImportError` for any other import failure. The
    returned ``Introspection`` has ``source_fn`` set and is *not* instantiated: the runner
    calls ``source_fn()`` itself (inside its ledger bookkeeping).
    """
    info = project.source(name)
    result = introspect(project, config, [info.name], instantiate=False, timeout=timeout)[name]
    if result.imported:
        return result
    verdict = result.verdict
    if verdict is not None and verdict.violations:
        raise ImportSafetyError(
            name, info.module_path, [v.describe(project.root) for v in verdict.violations]
        )
    reason = result.import_error or "unknown error"
    # the sandbox imported the module cleanly (or could not run at all): this process failed
    # it (e.g. dlt's import state), so the module is not to blame and a retry may pass
    if verdict is not None and (verdict.clean or verdict.sandbox_error):
        raise SourceImportEnvironmentError(name, info.module_path, reason)
    raise SourceImportError(name, info.module_path, reason)
