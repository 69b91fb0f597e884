"""0.1's validation context and its custom-validator run, kept for 0.1's callers.

A 0.1 validator is a callable ``(ctx) -> list[finding]`` reading ``ctx.sources`` (a dict by
name), ``ctx.config`` (the parsed ``config.toml``), ``ctx.project_root`` and asking
``ctx.rule_enabled``/``ctx.is_exempt``. This version's rules get
:class:`dlt_ops.validate.framework.ValidationContext` instead; ``ValidationContext(sources=...,
config=..., project_root=...)`` built by keyword, as 0.1 built it, gives a
:class:`LegacyValidationContext`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig


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
