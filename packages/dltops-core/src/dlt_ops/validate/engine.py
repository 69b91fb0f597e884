"""Running validate: resolve the rule catalog, run Phase 1 + 2, apply switches and exemptions.

Order of findings: plugin (provider) failures → config problems (unknown keys, rule switches,
exemptions) → always-on import findings → each enabled rule in catalog order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dlt_ops.errors import DltOpsError
from dlt_ops.log import get_logger
from dlt_ops.validate.framework import Finding, ResolvedRule, ValidationContext

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.project import Project

log = get_logger(__name__)

KIND = "validation_rule"
NOT_EXEMPTABLE_HINT = "[dlt_ops.rules] import_safety = false is the only opt-out."


@dataclass
class Catalog:
    """Every registered rule, resolved against ``[dlt_ops.rules]``, plus provider problems."""

    rules: dict[str, ResolvedRule] = field(default_factory=dict)
    problems: list[Finding] = field(default_factory=list)
    unknown_switches: list[str] = field(default_factory=list)


def resolve_catalog(registry: PluginRegistry, switches: dict[str, bool]) -> Catalog:
    """Load every ``validation_rule`` plugin and resolve each rule's on/off state."""
    registry.load_all(KIND)
    catalog = Catalog()
    for failure in registry.failures:
        if failure.source.kind == KIND:
            catalog.problems.append(Finding(
                "dlt_ops.validation_rule", f"plugins.{failure.source.name}",
                f"rules from {failure.source.origin} are unavailable this run: {failure.error}",
            ))  # fmt: skip
    conflicted = set()
    for kind, name, claimants in registry.conflicts():
        if kind == KIND:
            conflicted.add(name)
            who = ", ".join(c.claimant for c in claimants)
            catalog.problems.append(Finding(
                "dlt_ops.validation_rule", f"rules.{name}",
                f"rule id '{name}' is registered by several plugins: {who}; pick one under "
                f'[dlt_ops.plugins.validation_rule] {name} = "<distribution>".',
            ))  # fmt: skip
    for reg in registry.registrations(KIND):
        if reg.name in conflicted and registry.picks.get(KIND, {}).get(reg.name) not in (
            reg.source.dist,
            reg.source.value,
        ):
            continue
        rule = reg.obj
        if not (callable(getattr(rule, "check", None)) and getattr(rule, "id", None) == reg.name):
            catalog.problems.append(Finding(
                "dlt_ops.validation_rule", f"rules.{reg.name}",
                f"{reg.source.origin} registered '{reg.name}' with an object that is not a "
                f"ValidationRule (needs id == the registered name, description, default_on, "
                f"check(ctx)).",
            ))  # fmt: skip
            continue
        default = bool(getattr(rule, "default_on", True))
        enabled = switches.get(reg.name, default)
        owner = reg.source.dist or f"<inline {reg.source.value}>"
        catalog.rules[reg.name] = ResolvedRule(rule, owner, enabled)
    catalog.unknown_switches = sorted(set(switches) - set(catalog.rules))
    return catalog


def _config_findings(
    config: ProjectConfig, catalog: Catalog, registry: PluginRegistry
) -> list[Finding]:
    from dlt_ops.config.plugin_keys import undeclared

    out = []
    valid = ", ".join(sorted(catalog.rules))
    try:
        unknown = undeclared(config, registry, list(config.warnings))
    except DltOpsError as exc:  # a declared key with a bad value, or its plugin did not load
        unknown = list(config.warnings)
        out.append(Finding("dlt_ops", "config", str(exc)))
    for w in unknown:
        table = w.key.rsplit(".", 1)[0]
        source = table.split(".")[1] if table.startswith("sources.") else "dlt_ops"
        out.append(Finding(source, w.key, w.message, is_warning=True))
    for rule_id in catalog.unknown_switches:
        out.append(Finding(
            "dlt_ops.rules", f"rules.{rule_id}",
            f"unknown rule id '{rule_id}' in [dlt_ops.rules]; valid rule ids: {valid}",
        ))  # fmt: skip
    for name, cfg in config.sources.items():
        table = f"[sources.{name}.dlt_ops.rule_exemptions]"
        for rule_id, reason in cfg.rule_exemptions.items():
            if rule_id == "import_safety":
                out.append(Finding(
                    name, "rule_exemptions.import_safety",
                    f"rule 'import_safety' cannot be exempted per source (a module with import "
                    f"side effects is never imported); {NOT_EXEMPTABLE_HINT}",
                ))  # fmt: skip
            elif rule_id not in catalog.rules:
                out.append(Finding(
                    name, f"rule_exemptions.{rule_id}",
                    f"unknown rule id '{rule_id}' in {table}; valid rule ids: {valid}",
                ))  # fmt: skip
            elif not isinstance(reason, str) or not reason.strip():
                out.append(Finding(
                    name, f"rule_exemptions.{rule_id}",
                    f"exemption for rule '{rule_id}' in {table} requires a non-empty reason: "
                    f'{rule_id} = "<why this source is exempt>"',
                ))  # fmt: skip
    return out


def _import_findings(ctx: ValidationContext, needs_import: bool) -> list[Finding]:
    out = []
    for u in ctx.project.unloadable:
        out.append(Finding(u.path.stem, "import", f"source module {ctx.rel(u.path)}: {u.error}"))
    for name, paths in ctx.project.duplicates:
        listed = ", ".join(ctx.rel(p) for p in paths)
        out.append(
            Finding(
                name,
                "duplicate_source",
                f"source '{name}' is defined more than once: {listed}; rename one.",
            )
        )
    for intro in ctx.introspected.values():
        name, module = intro.info.name, ctx.rel(intro.info.module_path)
        if intro.import_error:
            out.append(Finding(name, "import", f"source module {module}: {intro.import_error}"))
        elif intro.instantiate_error:
            out.append(Finding(
                name, "instantiate",
                f"calling {intro.info.function_name}() failed: {intro.instantiate_error}; "
                f"give its arguments defaults or configure them in .dlt/config.toml / secrets.",
            ))  # fmt: skip
        if needs_import and intro.facts is None:
            out.append(Finding(
                name, "validation_coverage",
                f"reduced rule coverage: source '{name}' could not be imported and "
                f"instantiated, so the rules that inspect live resources did not run for it.",
            ))  # fmt: skip
    return out


def _exempt(finding: Finding, rule: ResolvedRule, config: ProjectConfig) -> bool:
    if not rule.exemptable:
        return False
    who = finding.exempt_by or (finding.source,)
    return all(
        isinstance(r := config.source(s).rule_exemptions.get(rule.id), str) and r.strip()
        for s in who
    )


@dataclass
class ValidationReport:
    """Findings plus what was (not) checked."""

    findings: list[Finding]
    catalog: Catalog
    not_checked: list[str]
    sources: int

    @property
    def errors(self) -> list[Finding]:
        """Error-severity findings."""
        return [f for f in self.findings if not f.is_warning]

    @property
    def warnings(self) -> list[Finding]:
        """Warning-severity findings."""
        return [f for f in self.findings if f.is_warning]


def validate_project(
    config: ProjectConfig,
    registry: PluginRegistry,
    project: Project,
    *,
    strict: bool = False,
    on_progress: Callable[[str], None] | None = None,
) -> ValidationReport:
    """Validate a discovered project: the whole of ``dlt-ops pipeline validate``."""
    from dlt_ops.project.introspect import introspect

    catalog = resolve_catalog(registry, dict(config.rules))
    enabled = [r for r in catalog.rules.values() if r.enabled and not r.provided_later]
    needs_import = any(getattr(r.rule, "needs_import", False) for r in enabled)
    step = on_progress or (lambda _label: None)

    def on_module(path: Path, verdict: object) -> None:
        step(f"sandbox {path.name}")

    cached = all(getattr(r.rule, "uses_facts", False) for r in enabled
                 if getattr(r.rule, "needs_import", False))  # fmt: skip
    intro = (
        introspect(project, config, cached_facts=cached, on_module=on_module)
        if project.sources else {}
    )  # fmt: skip
    ctx = ValidationContext(config, project, registry, intro, catalog.rules)
    findings = [*catalog.problems, *_config_findings(config, catalog, registry)]
    findings += _import_findings(ctx, needs_import)
    for resolved in enabled:
        step(f"rule {resolved.id}")
        try:
            produced = list(resolved.rule.check(ctx))
        except Exception as exc:  # one broken rule never hides the others
            log.debug("validate.rule_crashed", rule=resolved.id, exc_info=True)
            produced = [Finding(
                "dlt_ops.validation_rule", f"rules.{resolved.id}",
                f"rule '{resolved.id}' ({resolved.distribution}) crashed: "
                f"{type(exc).__name__}: {exc}",
            )]  # fmt: skip
        for f in produced:
            if not _exempt(f, resolved, config):
                findings.append(
                    Finding(f.source, f.field, f.message, f.is_warning, resolved.id, f.exempt_by)
                )
    not_checked = [r.id for r in catalog.rules.values() if r.enabled and r.provided_later]
    declares_assertions = any(c.assertions for c in config.sources.values())
    for rule_id in not_checked:
        if rule_id.startswith("assertion_") and declares_assertions:
            findings.append(Finding(
                "dlt_ops.assertions", rule_id,
                f"assertions are declared but rule '{rule_id}' is not available in this "
                f"version ({catalog.rules[rule_id].provided_later}); they were not validated.",
                is_warning=True, rule=rule_id,
            ))  # fmt: skip
    if strict:
        findings = [Finding(f.source, f.field, f.message, False, f.rule) for f in findings]
    return ValidationReport(findings, catalog, not_checked, len(project.sources))
