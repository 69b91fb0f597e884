"""0.1's custom validators and rule declaration (``RuleSpec``) on this version's rules: a 0.1
validator reads :class:`dlt_ops.validate.legacy_context.LegacyValidationContext`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from dlt_ops.validate.framework import Finding, Rule
from dlt_ops.validate.legacy_context import LegacyValidationContext, legacy_context


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

    doc = (validator.__doc__ or "").strip().splitlines()
    description = doc[0] if doc else rule_id

    def check(ctx: Any) -> list[Finding]:
        return list(validator(legacy_context(ctx.config, ctx.project.sources)) or ())

    return Rule(rule_id, description, check, default_on=default_on)
