"""The discovery data model: what Phase 1 finds in a project, without importing any of it.

Everything here is plain, frozen data derived from the file tree and the AST, so it can be
computed in milliseconds, cached, and handed to the CLI, the rules and the runner.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Layout conventions shared by discovery and ``init`` (reference §4.1).
SOURCE_DIR = "source"
RESOURCE_DIR = "resource"
#: Project-local state (sandbox verdict cache, ...); git-ignored by ``init``.
STATE_DIR = ".dlt-ops"
#: dlt config sections under ``[sources]`` that are dlt's own, never a source.
DLT_RESERVED_SECTIONS = frozenset({"data_writer", "normalize", "load", "extract"})


@dataclass(frozen=True)
class ColumnsRef:
    """The ``columns=`` argument of a resource as written: a model name, an attribute, other."""

    kind: str  # "name" | "attribute" | "other"
    text: str


@dataclass(frozen=True)
class ResourceDef:
    """One ``@dlt.resource`` function or ``dlt.resource(...)`` call found in a module."""

    name: str
    function_name: str | None
    file: Path
    lineno: int
    has_name_kwarg: bool
    columns: ColumnsRef | None
    schema_contract: Any = None  # a literal dict, "<non-literal>", or None when not declared


@dataclass(frozen=True)
class ContractDecl:
    """A ``schema_contract=`` keyword found anywhere (source or resource decorator, call)."""

    file: Path
    lineno: int
    value: Any  # a literal dict/str, or "<non-literal>"
    owner_function: str | None  # enclosing/decorated top-level function, when known


@dataclass(frozen=True)
class IncrementalDecl:
    """A ``dlt.sources.incremental("<cursor>", ...)`` construction."""

    file: Path
    lineno: int
    cursor: str | None


@dataclass(frozen=True)
class CallSite:
    """A call of one of dlt's table-hint helpers (``<destination>_adapter(...)``) with the
    keywords it passes."""

    file: Path
    lineno: int
    keywords: frozenset[str]
    comment_above: tuple[str, ...] = ()
    #: the helper's name, e.g. ``<destination>_adapter``
    name: str = ""


@dataclass(frozen=True)
class ModuleFacts:
    """What the AST says about one ``.py`` file of a pipeline."""

    path: Path
    error: str | None = None
    sources: tuple[SourceDecl, ...] = ()
    resources: tuple[ResourceDef, ...] = ()
    contracts: tuple[ContractDecl, ...] = ()
    incrementals: tuple[IncrementalDecl, ...] = ()
    calls: tuple[CallSite, ...] = ()
    uses_checkpoints: bool = False


@dataclass(frozen=True)
class SourceDecl:
    """A top-level function decorated with ``@dlt.source``."""

    function_name: str
    explicit_name: str | None  # the ``name=`` string literal, if any
    has_name_kwarg: bool
    lineno: int
    secret_defaults: bool = False  # a parameter defaults to ``dlt.secrets.value``
    params: tuple[str, ...] = ()  # parameter names (dlt may inject each from config or env)

    @property
    def key(self) -> str:
        """The source name: the explicit name, else the function name minus ``_source``."""
        return self.explicit_name or self.function_name.removesuffix("_source")


#: keywords only dlt-ops 0.1's SourceInfo(...) took: they build 0.1's shape
_KEYWORDS_0_1 = frozenset({"pipeline_name", "path", "source_fn", "resources", "config"})


@dataclass(frozen=True)
class SourceInfo:
    """One discovered source: identity, location and its static (Phase 1) resource list."""

    name: str
    pipeline: str
    pipeline_dir: Path
    module_path: Path
    function_name: str
    explicit_name: str | None
    lineno: int
    static_resources: tuple[str, ...]
    uses_checkpoints: bool
    secret_defaults: bool = False
    params: tuple[str, ...] = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        """0.1's keyword form (``pipeline_name=``, ``path=``, ``source_fn=``...) builds 0.1's
        record (:class:`dlt_ops.project.legacy_source_info.LegacySourceInfo`)."""
        if kwargs and not args and not _KEYWORDS_0_1.isdisjoint(kwargs):
            from dlt_ops.project.legacy_source_info import LegacySourceInfo

            return LegacySourceInfo(**kwargs)
        return super().__new__(cls)

    @property
    def module_stem(self) -> str:
        """The module file name without ``.py``; must equal the source name."""
        return self.module_path.stem

    @property
    def config_section(self) -> str:
        """The ``[sources.<section>]`` this source reads: its name."""
        return self.name

    # dlt-ops 0.1's names for three fields (docs/migrating-from-0.1.md)
    @property
    def pipeline_name(self) -> str:
        """``pipeline``: the pipeline directory the source lives in."""
        return self.pipeline

    @property
    def path(self) -> Path:
        """``module_path``: the source module's file."""
        return self.module_path

    @property
    def resources(self) -> tuple[str, ...]:
        """``static_resources``: the resource names read from the module without importing it."""
        return self.static_resources


@dataclass(frozen=True)
class UnloadableModule:
    """A ``source/*.py`` that could not be read or parsed."""

    pipeline: str
    path: Path
    error: str


@dataclass(frozen=True)
class Pipeline:
    """A pipeline directory directly under the root, with its scanned modules."""

    name: str
    path: Path
    source_modules: tuple[ModuleFacts, ...]
    resource_modules: tuple[ModuleFacts, ...]

    def modules(self) -> tuple[ModuleFacts, ...]:
        """Every parsed module of the pipeline, source modules first."""
        return self.source_modules + self.resource_modules


@dataclass(frozen=True)
class Project:
    """Phase-1 view of a project: pipelines, sources by name, and what could not be parsed."""

    root: Path
    pipelines: tuple[Pipeline, ...]
    sources: dict[str, SourceInfo]
    unloadable: tuple[UnloadableModule, ...] = ()
    duplicates: tuple[tuple[str, tuple[Path, ...]], ...] = ()
    rejected_dirs: tuple[tuple[str, str], ...] = field(default=())

    def source(self, name: str) -> SourceInfo:
        """The source called ``name`` or an ``UnknownSourceError`` listing what exists."""
        from dlt_ops.errors import DuplicateSourceError, UnknownSourceError

        for dup, modules in self.duplicates:
            if dup == name:
                raise DuplicateSourceError(name, modules)
        try:
            return self.sources[name]
        except KeyError:
            raise UnknownSourceError(name, sorted(self.sources)) from None

    def pipeline(self, name: str) -> Pipeline:
        """The pipeline directory called ``name``."""
        return next(p for p in self.pipelines if p.name == name)

    def sources_in(self, pipeline: str) -> list[SourceInfo]:
        """Sources defined in one pipeline directory."""
        return [s for s in self.sources.values() if s.pipeline == pipeline]
