"""Validate rules for assertions and their runtime-preflight twin.

* ``assertion_config_valid``: structure, registered types, ``on_failure`` domain, thresholds,
  no quarantine on batch-scoped types, each type's ``check_config``, ``[[custom]]`` shape,
  resource names against the live source, no plugin squatting a reserved key.
* ``assertion_columns_exist``: columns named in params exist on the resource's Pydantic model
  (a separate rule so it can be exempted on its own).
* ``assertion_predicate_resolvable``: each ``[[custom]]`` predicate imports and is callable,
  probed in a sandboxed child process (import-time side effects are reported, not run here).

A run makes the same checks once, for its selected resources, in the assertion gate
(:class:`~dlt_ops.assertions.gate.AssertionGateFactory`), and resolves predicates for real.
Quarantine on a core-tier destination is refused by the ``destination_capability`` rule and
the preflight's capability check.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dlt_ops.assertions.checks import check_specs
from dlt_ops.assertions.model import ParsedAssertions, parse_assertions
from dlt_ops.validate.framework import Finding, Rule, ValidationContext

if TYPE_CHECKING:
    pass

PROBE_TIMEOUT_S = 30.0


def _declared(ctx: ValidationContext) -> Iterator[tuple[str, ParsedAssertions, Any]]:
    """``(source, parsed, introspection or None)`` for every known source declaring assertions."""
    for s in ctx.sources():
        raw = ctx.config.source(s.name).assertions
        if raw:
            yield s.name, parse_assertions(raw, s.name), ctx.introspected.get(s.name)


def _live(intro: Any) -> dict[str, tuple[str, ...] | None] | None:
    """Resource name → declared columns of the instantiated source (its Phase-2 facts, which
    may come from the facts cache: never the live objects), ``None`` when not instantiated."""
    facts = getattr(intro, "facts", None)
    return facts.declared_columns() if facts is not None else None


def assertion_config_valid(ctx: ValidationContext) -> Iterator[Finding]:
    """Assertion tables are well-formed and name registered types on live resources."""
    for name, parsed, intro in _declared(ctx):
        live = _live(intro)
        issues, _ = check_specs(parsed, ctx.registry, resources=live)
        for issue in issues:
            yield Finding(name, issue.field, issue.message)


def assertion_columns_exist(ctx: ValidationContext) -> Iterator[Finding]:
    """Columns named by assertions exist on the resource's Pydantic model."""
    for name, parsed, intro in _declared(ctx):
        live = _live(intro)
        if live is None:
            continue
        _, columns = check_specs(parsed, ctx.registry, resources=live, declared=live)
        for issue in columns:
            yield Finding(name, issue.field, issue.message)
        yield from _defaulted_required(name, parsed, intro.facts)


def _defaulted_required(source: str, parsed: ParsedAssertions, facts: Any) -> Iterator[Finding]:
    """A warning per ``required_columns`` naming a field the model defaults: validation fills
    the field before the assertion sees the row, so the assertion can never fire."""
    defaulted = {r.name: set(r.defaulted_fields) for r in facts.resources}
    for res in parsed.resources:
        for spec in res.specs:
            if spec.type_name != "required_columns":
                continue
            value = spec.params.get("value")
            names = [c for c in value if c in defaulted.get(res.resource, ())] if isinstance(
                value, list) else []  # fmt: skip
            if names:
                listed = ", ".join(f"'{c}'" for c in names)
                yield Finding(source, spec.field,
                              f"required_columns names {listed}, which the model of resource "
                              f"'{res.resource}' gives a default: validation fills it in before "
                              f"the assertion sees the row, so it never fires (drop the default "
                              f"or the column from required_columns)", is_warning=True)  # fmt: skip


def probe_predicate(root: Path, predicate: str, timeout: float = PROBE_TIMEOUT_S) -> str | None:
    """``None`` when ``predicate`` resolves cleanly in a sandboxed child, else the problem."""
    from dlt_ops.project._sandbox_child import MARKER

    payload = json.dumps({"root": str(root), "predicate": predicate})
    try:
        proc = subprocess.run(
            [sys.executable, "-B", "-m", "dlt_ops.assertions._probe", payload],
            capture_output=True, cwd=root, timeout=timeout, check=False,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return f"probe failed: timed out after {timeout:g}s"
    lines = [ln for ln in proc.stdout.decode(errors="replace").splitlines()
             if ln.startswith(MARKER)]  # fmt: skip
    if not lines:
        tail = " | ".join(proc.stderr.decode(errors="replace").strip().splitlines()[-3:])
        return f"probe failed: exit {proc.returncode}: {tail}"
    result = json.loads(lines[-1][len(MARKER) :])
    problems = [f"import-safety violation: {v['kind']} at import of predicate "
                f"({v['event']}({v['target']}) at {v['file']}:{v['line']})"
                for v in result.get("violations", [])]  # fmt: skip
    if result.get("error"):
        problems.insert(0, f"not resolvable: {result['error']}")
    return "; ".join(problems) or None


def assertion_predicate_resolvable(ctx: ValidationContext) -> Iterator[Finding]:
    """Custom predicates import cleanly (sandboxed probe) and are callable."""
    verdicts: dict[str, str | None] = {}
    for name, parsed, _ in _declared(ctx):
        for res in parsed.resources:
            for spec in res.specs:
                if not spec.is_custom or spec.predicate is None:
                    continue
                if spec.predicate not in verdicts:
                    verdicts[spec.predicate] = probe_predicate(ctx.root, spec.predicate)
                problem = verdicts[spec.predicate]
                if problem:
                    yield Finding(name, spec.field,
                                  f"custom predicate '{spec.predicate}' {problem}")  # fmt: skip


ASSERTION_RULES = (
    Rule("assertion_config_valid", "Assertion tables are well-formed.",
         assertion_config_valid, uses_facts=True),
    Rule("assertion_columns_exist", "Assertion columns exist on the resource model.",
         assertion_columns_exist, needs_import=True, uses_facts=True),
    Rule("assertion_predicate_resolvable", "Custom assertion predicates import cleanly.",
         assertion_predicate_resolvable),
)  # fmt: skip
