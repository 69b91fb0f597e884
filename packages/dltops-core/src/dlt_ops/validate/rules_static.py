"""Core rules that read only config and the Phase-1 AST facts (no project import needed)."""

from __future__ import annotations

from collections.abc import Iterator

from dlt_ops.config import Schedule
from dlt_ops.project.ast_scan import NON_LITERAL
from dlt_ops.project.model import DLT_RESERVED_SECTIONS
from dlt_ops.validate.framework import Finding, Rule, ValidationContext

CANONICAL_CONTRACT = {"tables": "evolve", "columns": "freeze", "data_type": "freeze"}
EVOLVE_CONTRACT = {"tables": "evolve", "columns": "evolve", "data_type": "freeze"}


def config_section_required(ctx: ValidationContext) -> Iterator[Finding]:
    """Every source has a [sources.<name>] section in .dlt/config.toml."""
    for s in ctx.sources():
        if not ctx.config.source(s.name).has_section:
            yield Finding(
                s.name, "config_section",
                f"Missing config section [sources.{s.name}] in .dlt/config.toml; add it "
                f'with a [sources.{s.name}.dlt_ops] table holding schedule = "@daily".',
            )  # fmt: skip


def _why_invalid(schedule: str, timezone: str | None) -> str:
    """What is wrong with ``schedule``, in the cron parser's words."""
    from dlt_ops.cron import cron_of
    from dlt_ops.errors import ConfigError

    try:
        cron_of(schedule, timezone)
    except ConfigError as exc:
        prefix = f"invalid schedule {schedule!r}: "
        return str(exc).removeprefix(prefix) if str(exc).startswith(prefix) else "unknown tag"
    return "invalid"


def schedule_required(ctx: ValidationContext) -> Iterator[Finding]:
    """Every source declares a valid schedule in [sources.<name>.dlt_ops]."""
    valid = ", ".join(s.value for s in Schedule)
    for s in ctx.sources():
        cfg = ctx.config.source(s.name)
        if cfg.schedule is None:
            yield Finding(
                s.name, "schedule",
                f"Missing 'schedule' field in [sources.{s.name}.dlt_ops]; one of: {valid}.",
            )  # fmt: skip
        elif not cfg.schedule_valid:
            yield Finding(
                s.name, "schedule",
                f"Invalid schedule {cfg.schedule!r} in [sources.{s.name}.dlt_ops] "
                f"({_why_invalid(cfg.schedule, cfg.timezone)}); one of: {valid}, or "
                "cron:<min hour dom month dow> [<time zone>].",
            )  # fmt: skip


def explicit_source_name(ctx: ValidationContext) -> Iterator[Finding]:
    """Every @dlt.source states its name as a string literal: @dlt.source(name="..."), one
    every command accepts (:func:`dlt_ops.names.check_name`: a run refuses any other)."""
    from dlt_ops.errors import InvalidNameError
    from dlt_ops.names import check_name

    for s in ctx.sources():
        if s.explicit_name is None:
            yield Finding(
                s.name, "decorator_name",
                f"Source function '{s.function_name}' in {ctx.rel(s.module_path)} must have an "
                f'explicit name: @dlt.source(name="{s.name}").',
            )  # fmt: skip
        try:
            check_name(s.name, subject="source")
        except InvalidNameError as exc:
            yield Finding(repr(s.name)[1:-1], "decorator_name", f"{exc} ({ctx.rel(s.module_path)})")


def module_name_matches_section(ctx: ValidationContext) -> Iterator[Finding]:
    """A source module's file name equals its source name (dlt derives the config section
    from the module name)."""
    for s in ctx.sources():
        if s.module_stem != s.name:
            yield Finding(
                s.name, "module_stem",
                f"Module filename mismatch: '{s.module_stem}.py' but the source is '{s.name}'. "
                f"Rename the module to '{s.name}.py' so dlt resolves [sources.{s.name}] config "
                f"and secrets for it.",
            )  # fmt: skip


def orphan_config_sections(ctx: ValidationContext) -> Iterator[Finding]:
    """Every [sources.<name>] section belongs to a discovered source."""
    sections = ctx.config.raw.get("sources", {})
    known = set(ctx.project.sources) | {u.path.stem for u in ctx.project.unloadable}
    for name in sections:
        if name not in known and name not in DLT_RESERVED_SECTIONS:
            yield Finding(
                name, "config_section",
                f"Orphan config section [sources.{name}] has no matching source; remove it "
                f"or fix the source's name.",
                is_warning=True,
            )  # fmt: skip


def explicit_resource_name_multi_source(ctx: ValidationContext) -> Iterator[Finding]:
    """In a pipeline directory with two or more sources, every resource passes name=."""
    for pipe in ctx.project.pipelines:
        if len(ctx.project.sources_in(pipe.name)) < 2:
            continue
        for module in pipe.modules():
            for r in module.resources:
                if r.has_name_kwarg:
                    continue
                yield ctx.file_finding(
                    pipe.name, r.file, f"resource.name.{ctx.rel(r.file)}:{r.lineno}",
                    f"Resource '{r.name}' needs an explicit name= because pipeline '{pipe.name}' "
                    f'holds several sources: @dlt.resource(name="{r.name}", ...).',
                )  # fmt: skip


def cursor_not_load_timestamp(ctx: ValidationContext) -> Iterator[Finding]:
    """No incremental cursor is the [dlt_ops] load_timestamp_column (it changes every run)."""
    column = (ctx.config.load_timestamp_column or "").strip()
    if not column:
        return
    for pipe in ctx.project.pipelines:
        for module in pipe.modules():
            for inc in module.incrementals:
                if inc.cursor == column:
                    yield ctx.file_finding(
                        pipe.name, inc.file, f"incremental.{ctx.rel(inc.file)}:{inc.lineno}",
                        f"incremental cursor '{column}' is the load_timestamp_column that "
                        f"dlt-ops stamps at load time; use a column from the data instead.",
                    )  # fmt: skip


def schema_contract_declared(ctx: ValidationContext) -> Iterator[Finding]:
    """A declared schema_contract is the canonical literal (or the evolve literal with a
    written schema_contract_evolve_reason)."""
    for pipe in ctx.project.pipelines:
        sources = {s.function_name: s.name for s in ctx.project.sources_in(pipe.name)}
        for module in pipe.modules():
            for decl in module.contracts:
                owner = sources.get(decl.owner_function or "")
                owners = (owner,) if owner else ctx.owners_of(pipe.name, decl.file)
                where = f"schema_contract.{ctx.rel(decl.file)}:{decl.lineno}"
                value = decl.value
                if value == CANONICAL_CONTRACT:
                    continue
                reasons = [
                    (ctx.config.source(o).schema_contract_evolve_reason or "").strip()
                    for o in owners
                ]
                if value == EVOLVE_CONTRACT and owners and all(reasons):
                    continue
                if value == NON_LITERAL:
                    why = "is not a literal, so it cannot be checked"
                elif value == EVOLVE_CONTRACT:
                    why = (
                        "is the evolve contract, which needs "
                        "[sources.<name>.dlt_ops] schema_contract_evolve_reason"
                    )
                else:
                    why = f"is {value!r}"
                yield Finding(
                    "|".join(owners) or pipe.name, where,
                    f"schema_contract {why}; declare {CANONICAL_CONTRACT!r} or remove it "
                    f"(dlt-ops applies the canonical contract to resources without one).",
                    exempt_by=owners,
                )  # fmt: skip


def secrets_not_in_config(ctx: ValidationContext) -> Iterator[Finding]:
    """No destination password in .dlt/config.toml (dlt reads secrets only from secrets.toml
    or the environment, and would refuse it in the middle of a run)."""
    from dlt_ops.config.credentials import credentials_in_config
    from dlt_ops.destinations import resolve_destination
    from dlt_ops.errors import CredentialsInConfigError, DltOpsError

    for s in ctx.sources():
        try:
            where = resolve_destination(ctx.config, s.name)
        except DltOpsError:
            continue  # reported by the destination rules
        key = credentials_in_config(ctx.config.raw, where.engine, where.pipeline_name)
        if key is not None:
            yield Finding(s.name, "credentials", str(CredentialsInConfigError(key)))


def project_links(ctx: ValidationContext) -> Iterator[Finding]:
    """No pipeline directory holds a symlink loop or a module linked to nothing (every run of
    its sources refuses one)."""
    from dlt_ops.project.links import broken_links, describe

    for pipeline in ctx.project.pipelines:
        links = broken_links(pipeline.path)
        if links:
            yield Finding(pipeline.name, "links", describe(ctx.project.root, links))


STATIC_RULES = (
    Rule("project_links", "No symlink loop or dangling module link in a pipeline directory.",
         project_links, exemptable=False),
    Rule("config_section_required", "Every source has a [sources.<name>] config section.",
         config_section_required),
    Rule("schedule_required", "Every source declares a valid schedule.", schedule_required),
    Rule("explicit_source_name", 'Every @dlt.source has name="<literal>".', explicit_source_name),
    Rule("module_name_matches_section", "A source module's file name equals the source name.",
         module_name_matches_section),
    Rule("orphan_config_sections", "Every [sources.<name>] section has a source (warning).",
         orphan_config_sections),
    Rule("explicit_resource_name_multi_source",
         "Resources in a multi-source pipeline pass name=.", explicit_resource_name_multi_source),
    Rule("cursor_not_load_timestamp", "No incremental cursor is the load_timestamp_column.",
         cursor_not_load_timestamp),
    Rule("schema_contract_declared", "A declared schema_contract is the canonical literal.",
         schema_contract_declared),
    Rule("secrets_not_in_config", "No destination password in .dlt/config.toml.",
         secrets_not_in_config, exemptable=False),
)  # fmt: skip
