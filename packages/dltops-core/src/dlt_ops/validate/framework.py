"""The validation-rule contract: ``ValidationRule``, ``Finding`` and the context rules read.

Rules are plugins (kind ``validation_rule``, hook ``dlt_ops_register_validation_rules``); the
core's own rules register through the same entry-point mechanism as anyone else's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from dlt_ops.plugins.kinds import Kind

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.project import Project, SourceInfo
    from dlt_ops.project.introspect import Introspection


@dataclass(frozen=True)
class Finding:
    """One validate finding. ``source`` is a source name, a pipeline directory or a config
    table (``dlt_ops.rules``); ``exempt_by`` lists the sources whose exemption silences it
    (default: ``source`` itself) — a finding shared by several sources needs all of them."""

    source: str
    field: str
    message: str
    is_warning: bool = False
    rule: str | None = None
    exempt_by: tuple[str, ...] = ()

    def __init__(  # noqa: PLR0913 - the dataclass's fields, plus 0.1's spelling of ``source``
        self,
        source: str | None = None,
        field: str = "",
        message: str = "",
        is_warning: bool = False,
        rule: str | None = None,
        exempt_by: tuple[str, ...] = (),
        *,
        source_name: str | None = None,
    ) -> None:
        """``source_name=`` is dlt-ops 0.1's ``ValidationError(source_name=...)``."""
        if (source is None) == (source_name is None):
            raise TypeError("Finding() takes source (or 0.1's source_name), exactly one")
        values = (source if source is not None else source_name, field, message, is_warning,
                  rule, tuple(exempt_by))  # fmt: skip
        for name, value in zip(_FINDING_FIELDS, values, strict=True):
            object.__setattr__(self, name, value)

    @property
    def source_name(self) -> str:
        """``source`` under dlt-ops 0.1's name (its ``ValidationError.source_name``)."""
        return self.source

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` shape (the reference's keys plus ``rule``)."""
        return {
            "source": self.source,
            "field": self.field,
            "message": self.message,
            "is_warning": self.is_warning,
            "rule": self.rule,
        }


_FINDING_FIELDS = ("source", "field", "message", "is_warning", "rule", "exempt_by")


@runtime_checkable
class ValidationRule(Protocol):
    """What a ``validation_rule`` plugin registers.

    ``id`` is the name users switch in ``[dlt_ops.rules]`` and exempt per source;
    ``description`` is one line; ``default_on`` says whether the rule runs when the config does
    not mention it. ``check`` yields :class:`Finding` objects for the project in ``ctx``.

    Optional attributes, read with defaults: ``exemptable`` (``True``; ``False`` refuses
    per-source exemptions), ``needs_import`` (``False``; ``True`` when the rule inspects
    imported/instantiated sources, so sources that failed Phase 2 reduce its coverage),
    ``uses_facts`` (``False``; ``True`` when the rule reads Phase-2 results only through
    ``Introspection.facts`` / ``verdict`` and never touches live objects such as
    ``Introspection.source``, so validate may answer it from the facts cache without importing
    dlt or project code — one enabled ``needs_import`` rule without it makes every validate
    import and instantiate the sources) and ``provided_later`` (``None``; a string marks a
    catalog slot whose check is not shipped yet — it is listed but never run, and never
    reported as passing).
    """

    id: str
    description: str
    default_on: bool

    def check(self, ctx: ValidationContext) -> Iterable[Finding]:
        """Yield findings; an exception is reported as an error finding, never raised."""


#: The typed key: ``registry.get(VALIDATION_RULE, name)`` is a :class:`ValidationRule`.
VALIDATION_RULE: Kind[ValidationRule] = Kind("validation_rule", ValidationRule)


@dataclass(frozen=True)
class Rule:
    """A convenient :class:`ValidationRule` built from a function."""

    id: str
    description: str
    fn: Callable[[ValidationContext], Iterable[Finding]] | None = None
    default_on: bool = True
    exemptable: bool = True
    needs_import: bool = False
    provided_later: str | None = None
    uses_facts: bool = False

    def check(self, ctx: ValidationContext) -> Iterable[Finding]:
        """Run ``fn`` (a pending slot yields nothing and is never run by the engine)."""
        return self.fn(ctx) if self.fn is not None else ()


@dataclass(frozen=True)
class ResolvedRule:
    """A rule in the catalog with its owner and whether the project has it switched on."""

    rule: Any
    distribution: str
    enabled: bool

    @property
    def id(self) -> str:
        """The rule id."""
        return str(self.rule.id)

    @property
    def provided_later(self) -> str | None:
        """Set on catalog slots whose check ships later."""
        return getattr(self.rule, "provided_later", None)

    @property
    def exemptable(self) -> bool:
        """Whether per-source exemptions apply."""
        return bool(getattr(self.rule, "exemptable", True))


#: keywords only dlt-ops 0.1's ValidationContext(...) took: they build 0.1's shape
_KEYWORDS_0_1 = frozenset({"sources", "project_root", "resolved_rules", "exemptions"})


@dataclass
class ValidationContext:
    """Everything a rule may read. Phase-1 facts are always there; ``introspected`` holds
    Phase-2 results (sources that failed Phase 2 have ``import_error`` set; instantiated ones
    have ``facts``, and live objects unless the facts came from the cache)."""

    config: ProjectConfig
    project: Project
    registry: PluginRegistry
    introspected: Mapping[str, Introspection] = field(default_factory=dict)
    catalog: Mapping[str, ResolvedRule] = field(default_factory=dict)

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        """0.1's keyword form (``sources=``, ``config=``, ``project_root=``...) builds 0.1's
        context (:class:`dlt_ops.validate.legacy_context.LegacyValidationContext`)."""
        if kwargs and not args and not _KEYWORDS_0_1.isdisjoint(kwargs):
            from dlt_ops.validate.legacy_context import LegacyValidationContext

            return LegacyValidationContext(**kwargs)
        return super().__new__(cls)

    @property
    def root(self) -> Path:
        """The project root."""
        return self.project.root

    def rel(self, path: Path | str) -> str:
        """``path`` relative to the root, POSIX style."""
        p = Path(path)
        try:
            return p.relative_to(self.root).as_posix()
        except ValueError:
            return p.as_posix()

    def sources(self) -> list[SourceInfo]:
        """Every Phase-1 source, sorted by name."""
        return list(self.project.sources.values())

    def live(self) -> list[Introspection]:
        """Sources that imported and instantiated cleanly (for rules that inspect resources):
        each has ``facts``; ``source`` is ``None`` when they came from the facts cache."""
        return [i for i in self.introspected.values() if i.facts is not None]

    def file_finding(self, pipeline: str, file: Path, field: str, message: str) -> Finding:
        """A finding about a definition in ``file``, owned (and exemptable) by the sources that
        use it; the pipeline directory stands in when no source does."""
        owners = self.owners_of(pipeline, file)
        return Finding("|".join(owners) or pipeline, field, message, exempt_by=owners)

    def owners_of(self, pipeline: str, file: Path) -> tuple[str, ...]:
        """The sources a file's definitions belong to (its own sources, else its users)."""
        sources = self.project.sources_in(pipeline)
        own = tuple(s.name for s in sources if s.module_path == file)
        if own:
            return own
        defined = {
            r.name for m in self.project.pipeline(pipeline).modules() if m.path == file
            for r in m.resources
        }  # fmt: skip
        users = []
        for s in sources:
            intro = self.introspected.get(s.name)
            names = (intro.live_resources if intro else None) or s.static_resources
            if defined & set(names):
                users.append(s.name)
        return tuple(users) or tuple(s.name for s in sources)
