"""Assertion vocabulary and the one config parser shared by the gate, validate and preflight.

``[sources.<X>.dlt_ops.assertions.<resource>]`` holds one table per resource. Each non-reserved
key names an assertion type (a plugin of kind ``assertion_rule``); its value is a shorthand
scalar/array (``{"value": x}``) or a table whose ``on_failure``, ``max_violations`` and
``max_violation_ratio`` keys are popped as policy and whose remaining keys are the params.
``on_failure`` and the two thresholds may also be set per resource; ``[[...custom]]`` entries
name row predicates (``module:attr``). Precedence: built-in ``fail`` < resource < assertion.

Parsing is structural only (no registry, no data): type-aware checks live in ``checks.py``.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, TypeAlias, runtime_checkable

from dlt_ops.plugins.kinds import Kind

#: Keys of a resource table that are not assertion types.
RESERVED_KEYS = frozenset({"on_failure", "custom", "max_violations", "max_violation_ratio"})
#: Policy keys popped from an assertion's table form (the rest are the type's params).
POLICY_KEYS = ("on_failure", "max_violations", "max_violation_ratio")
#: ``module:attr`` (attr may be dotted) or dotted ``package.module.attr``.
PREDICATE_RE = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*(:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*)?")
CUSTOM = "custom"


class OnFailure(StrEnum):
    """What happens to a violation."""

    fail = "fail"
    warn = "warn"
    quarantine = "quarantine"


@dataclass(frozen=True)
class AssertionContext:
    """What an assertion type's static ``check_config`` may look at (never data or clients).

    ``declared_columns`` are the field names of the resource's Pydantic model, ``None`` when
    unknown (then column-name checks are skipped).
    """

    source_section: str
    resource_name: str
    declared_columns: tuple[str, ...] | None = None


@runtime_checkable
class AssertionType(Protocol):
    """The protocol an ``assertion_rule`` plugin registers (see ``hookspecs.py``).

    ``name`` and ``row_scoped`` are read-only: class attributes satisfy them.
    """

    @property
    def name(self) -> str:
        """The key users write under ``[sources.X.dlt_ops.assertions.<resource>]``."""
        ...

    @property
    def row_scoped(self) -> bool:
        """``True`` when ``observe`` judges single rows (such a type may quarantine)."""
        ...

    def check_config(self, params: Mapping[str, Any], ctx: AssertionContext) -> list[str]:
        """Problems with ``params`` (no data, network or clients); ``[]`` when fine."""

    def start(self, params: Mapping[str, Any]) -> Any:
        """A fresh state for one resource in one run."""

    def observe(self, state: Any, row: Mapping[str, Any], params: Mapping[str, Any]) -> str | None:
        """``None`` when ``row`` passes, else the violation message for this row."""

    def finalize(self, state: Any, params: Mapping[str, Any]) -> str | None:
        """The batch verdict after the last row: ``None`` passes, a string fails the batch."""


#: What ``dlt_ops_register_assertion_rules`` registers: the class (instantiated once per run
#: with no arguments) or a ready instance.
AssertionTypeProvider: TypeAlias = AssertionType | type[AssertionType]
#: The typed key: ``registry.get(ASSERTION_RULE, name)`` is an :data:`AssertionTypeProvider`.
ASSERTION_RULE: Kind[AssertionTypeProvider] = Kind("assertion_rule", AssertionTypeProvider)


@dataclass(frozen=True)
class Threshold:
    """Tolerance for a row-scoped ``fail`` assertion: fail only when exceeded."""

    max_violations: int | None = None
    max_violation_ratio: float | None = None

    @property
    def active(self) -> bool:
        """Whether any tolerance is set (else the first violation fails)."""
        return self.max_violations is not None or self.max_violation_ratio is not None

    def exceeded(self, violations: int, rows: int) -> bool:
        """Whether ``violations`` among ``rows`` fails the run."""
        if violations == 0:
            return False
        if not self.active:
            return True
        if self.max_violations is not None and violations > self.max_violations:
            return True
        ratio = self.max_violation_ratio
        return ratio is not None and violations > ratio * rows

    def describe(self) -> str:
        """``max_violations 3, max_violation_ratio 0.01``."""
        parts = [f"max_violations {self.max_violations}"] if self.max_violations is not None else []
        if self.max_violation_ratio is not None:
            parts.append(f"max_violation_ratio {self.max_violation_ratio:g}")
        return ", ".join(parts)


@dataclass(frozen=True)
class AssertionSpec:
    """One declared assertion with its resolved policy."""

    type_name: str
    params: Mapping[str, Any]
    on_failure: OnFailure
    field: str
    threshold: Threshold = Threshold()
    predicate: str | None = None

    @property
    def is_custom(self) -> bool:
        """A ``[[custom]]`` predicate rather than a registered type."""
        return self.predicate is not None


@dataclass(frozen=True)
class ResourceAssertions:
    """The assertions of one resource, in declaration order (types first, then custom)."""

    resource: str
    specs: tuple[AssertionSpec, ...]

    @property
    def quarantines(self) -> bool:
        """Whether any assertion diverts rows to ``_dlt_rejected``."""
        return any(s.on_failure is OnFailure.quarantine for s in self.specs)


@dataclass(frozen=True)
class Issue:
    """A config problem: the dotted field under ``[sources.X.dlt_ops]`` and a message."""

    field: str
    message: str

    def __str__(self) -> str:
        return f"[{self.field}] {self.message}"


@dataclass(frozen=True)
class ParsedAssertions:
    """Everything declared for one source, plus structural issues."""

    source: str
    resources: tuple[ResourceAssertions, ...] = ()
    issues: tuple[Issue, ...] = field(default=())

    def for_resource(self, name: str) -> ResourceAssertions | None:
        """The assertions of ``name``, if any."""
        return next((r for r in self.resources if r.resource == name), None)

    def selected(self, names: Collection[str] | None) -> list[ResourceAssertions]:
        """Assertion sets of the selected resources (all when ``names`` is ``None``)."""
        return [r for r in self.resources if names is None or r.resource in names]

    def referenced_types(self, names: Collection[str] | None = None) -> list[str]:
        """Registered type names the selected resources use, each once."""
        out = [s.type_name for r in self.selected(names) for s in r.specs if not s.is_custom]
        return list(dict.fromkeys(out))

    def quarantine_resources(self, names: Collection[str] | None = None) -> list[str]:
        """Selected resources with at least one ``quarantine`` assertion."""
        return [r.resource for r in self.selected(names) if r.quarantines]


def _policy(
    table: Mapping[str, Any], where: str, inherited: tuple[OnFailure, Threshold],
    issues: list[Issue],
) -> tuple[OnFailure, Threshold]:  # fmt: skip
    mode, threshold = inherited
    raw = table.get("on_failure")
    if raw is not None:
        try:
            mode = OnFailure(raw)
        except ValueError:
            issues.append(
                Issue(
                    f"{where}.on_failure",
                    f"on_failure must be one of fail, warn, quarantine; got {raw!r}",
                )
            )
    max_v, ratio = threshold.max_violations, threshold.max_violation_ratio
    if "max_violations" in table:
        v = table["max_violations"]
        if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
            max_v = v
        else:
            issues.append(
                Issue(
                    f"{where}.max_violations", f"max_violations must be an integer >= 0; got {v!r}"
                )
            )
    if "max_violation_ratio" in table:
        v = table["max_violation_ratio"]
        if isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v < 1:
            ratio = float(v)
        else:
            issues.append(
                Issue(
                    f"{where}.max_violation_ratio",
                    f"max_violation_ratio must be a number in [0, 1); got {v!r}",
                )
            )
    return mode, Threshold(max_v, ratio)


def _custom(entries: Any, where: str, inherited: tuple[OnFailure, Threshold],
            issues: list[Issue]) -> list[AssertionSpec]:  # fmt: skip
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        issues.append(Issue(where, "custom must be an array of tables: [[...custom]] entries"))
        return []
    specs = []
    for i, entry in enumerate(entries):
        here = f"{where}[{i}]"
        predicate = entry.get("predicate")
        if not isinstance(predicate, str) or not PREDICATE_RE.fullmatch(predicate):
            issues.append(
                Issue(
                    f"{here}.predicate",
                    f"predicate must be 'module:attr' or 'package.module.attr'; got {predicate!r}",
                )
            )
            continue
        unknown = sorted(set(entry) - {"predicate", *POLICY_KEYS})
        if unknown:
            issues.append(
                Issue(
                    here,
                    f"unknown key(s) {', '.join(unknown)}; allowed: "
                    f"predicate, {', '.join(POLICY_KEYS)}",
                )
            )
        mode, threshold = _policy(entry, here, inherited, issues)
        specs.append(
            AssertionSpec(CUSTOM, {"predicate": predicate}, mode, here, threshold, predicate)
        )
    return specs


def parse_assertions(raw: Any, source: str) -> ParsedAssertions:
    """Parse ``[sources.<source>.dlt_ops.assertions]`` (the raw TOML value)."""
    issues: list[Issue] = []
    if raw is None:
        return ParsedAssertions(source)
    if not isinstance(raw, Mapping):
        return ParsedAssertions(
            source,
            (),
            (
                Issue(
                    "assertions", "assertions must be a table of [..assertions.<resource>] tables"
                ),
            ),
        )
    resources = []
    for resource, table in raw.items():
        where = f"assertions.{resource}"
        if not isinstance(table, Mapping):
            issues.append(Issue(where, f"must be a table of assertions, got {table!r}"))
            continue
        inherited = _policy(table, where, (OnFailure.fail, Threshold()), issues)
        specs = []
        for key, value in table.items():
            if key in RESERVED_KEYS:
                continue
            here = f"{where}.{key}"
            if isinstance(value, Mapping):
                params = {k: v for k, v in value.items() if k not in POLICY_KEYS}
                mode, threshold = _policy(value, here, inherited, issues)
            else:
                params, (mode, threshold) = {"value": value}, inherited
            specs.append(AssertionSpec(key, params, mode, here, threshold))
        if "custom" in table:
            specs += _custom(table["custom"], f"{where}.custom", inherited, issues)
        resources.append(ResourceAssertions(resource, tuple(specs)))
    return ParsedAssertions(source, tuple(resources), tuple(issues))
