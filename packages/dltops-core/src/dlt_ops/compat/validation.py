"""0.1's validation context and its custom-validator run, kept for 0.1's callers.

A 0.1 validator is a callable ``(ctx) -> list[finding]`` reading ``ctx.sources`` (a dict by
name), ``ctx.config`` (the parsed ``config.toml``), ``ctx.project_root`` and asking
``ctx.rule_enabled``/``ctx.is_exempt``. This version's rules get
:class:`dlt_ops.validate.framework.ValidationContext` instead; ``ValidationContext(sources=...,
config=..., project_root=...)`` built by keyword, as 0.1 built it, gives a
:class:`LegacyValidationContext`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig
    from dlt_ops.validate.framework import Finding, Rule


@dataclass(frozen=True)
class LegacyValidationContext:
    """What a 0.1 validator reads. Frozen, as 0.1's was."""

    sources: Mapping[str, Any]
    config: Mapping[str, Any]
    project_root: Path
    #: rule id -> switched on; a rule not named is on
    resolved_rules: Mapping[str, bool] = field(default_factory=dict)
    #: source -> {rule id: reason}
    exemptions: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def rule_enabled(self, rule_id: str) -> bool:
        """Whether ``rule_id`` is on (rules are on unless ``[dlt_ops.rules]`` turns them off)."""
        return bool(self.resolved_rules.get(rule_id, True))

    def is_exempt(self, source: str, rule_id: str) -> bool:
        """Whether ``source`` exempts itself from ``rule_id``."""
        return rule_id in self.exemptions.get(source, {})


def legacy_context(config: ProjectConfig, sources: Mapping[str, Any]) -> LegacyValidationContext:
    """The 0.1 context of a loaded project."""
    exemptions = {
        name: dict(cfg.rule_exemptions) for name, cfg in config.sources.items()
        if cfg.rule_exemptions
    }  # fmt: skip
    return LegacyValidationContext(
        sources=dict(sources), config=dict(config.raw), project_root=config.root,
        resolved_rules=dict(config.rules), exemptions=exemptions,
    )  # fmt: skip


def run_validators(
    ctx: LegacyValidationContext, validators: Sequence[Callable[[Any], Iterable[Finding]]]
) -> list[Finding]:
    """Exactly ``validators``, in order, on ``ctx`` (0.1's custom list replaced the rules)."""
    return [finding for validator in validators for finding in validator(ctx) or ()]


def RuleSpec(  # noqa: N802 - 0.1's class name, kept for its callers
    rule_id: str,
    validator: Callable[[Any], Iterable[Finding]],
    plugin: str | None = None,
    default_on: bool = True,
) -> Rule:
    """0.1's rule declaration as this version's :class:`~dlt_ops.validate.framework.Rule`:
    register the result from ``dlt_ops_register_validation_rules`` (docs/plugins.md). The
    validator is called with 0.1's context; its description is its docstring's first line."""
    from dlt_ops.validate.framework import Rule

    doc = (validator.__doc__ or "").strip().splitlines()
    description = doc[0] if doc else rule_id

    def check(ctx: Any) -> list[Finding]:
        return list(validator(legacy_context(ctx.config, ctx.project.sources)) or ())

    return Rule(rule_id, description, check, default_on=default_on)
