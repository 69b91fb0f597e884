"""Validation: the rule framework, the core rules and the runtime preflight.

Light to import (no dlt): rule plugins and the CLI import what they need lazily.
"""

from dlt_ops.validate.framework import (
    Finding,
    ResolvedRule,
    Rule,
    ValidationContext,
    ValidationRule,
)

__all__ = ["Finding", "ResolvedRule", "Rule", "ValidationContext", "ValidationRule"]
