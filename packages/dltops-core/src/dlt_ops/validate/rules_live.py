"""Core rules that need Phase 2: the sandbox verdicts and the instantiated sources.

They read :class:`~dlt_ops.project.facts.SourceFacts`, never live dlt objects, so validate
can answer them from the facts cache without importing dlt (``uses_facts=True``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from dlt_ops.project.facts import ResourceFacts
from dlt_ops.validate.framework import Finding, Rule, ValidationContext

if TYPE_CHECKING:
    from dlt_ops.project.introspect import Introspection


def import_safety(ctx: ValidationContext) -> Iterator[Finding]:
    """Source modules do no network I/O, disk writes, process spawns or pipeline runs at import."""
    for intro in ctx.introspected.values():
        if intro.verdict is None:
            continue
        stem = intro.info.module_stem
        for v in intro.verdict.violations:
            yield Finding(
                intro.info.name, "import_safety",
                f"{v.kind} at import of {stem}.py (line {v.line}): {v.event}({v.target}). "
                f"Move it into the source or resource function.",
            )  # fmt: skip


def _resources(intro: Introspection) -> tuple[ResourceFacts, ...]:
    return intro.facts.resources if intro.facts is not None else ()


def no_resource_overlap(ctx: ValidationContext) -> Iterator[Finding]:
    """Resource names are unique among the sources of one pipeline directory."""
    owner: dict[tuple[str, str], str] = {}
    for intro in ctx.live():
        for name in intro.live_resources or ():
            key = (intro.info.pipeline, name)
            first = owner.setdefault(key, intro.info.name)
            if first != intro.info.name:
                yield Finding(
                    intro.info.name, "resources",
                    f"Resource '{name}' already defined in source '{first}' (same pipeline "
                    f"'{intro.info.pipeline}'); rename one with name=.",
                )  # fmt: skip


def _exemption(source: str, rule: str) -> str:
    return f'[sources.{source}.dlt_ops.rule_exemptions] {rule} = "<why>"'


def _model_advice(source: str, res: ResourceFacts) -> str:
    """What the author of ``res`` can do to give it a Pydantic model, by who built it."""
    exempt = _exemption(source, "pydantic_columns_required")
    if res.builder == "rest_api":
        return (
            f"dlt's rest_api source builds it and infers column types from the JSON it "
            f'receives. Give it a model in its resource config ({{"name": "{res.name}", '
            f'"columns": MyModel, "endpoint": ...}}) or exempt it: {exempt}'
        )
    if res.builder == "filesystem":
        return (
            f"dlt's filesystem readers infer column types from the files. Give it a model "
            f"(resource.apply_hints(columns=MyModel)) or exempt it: {exempt}"
        )
    return f'declare a Pydantic model: @dlt.resource(name="{res.name}", columns=MyModel).'


def pydantic_columns_required(ctx: ValidationContext) -> Iterator[Finding]:
    """Every resource declares columns=<a pydantic.BaseModel subclass>; sql_database
    resources pass on the columns dlt reflects from the database."""
    for intro in ctx.live():
        for res in _resources(intro):
            if res.model is not None or res.builder == "sql_database":
                continue  # reflection gives sql_table resources a typed schema of their own
            what = "has no columns= model" if res.declared_type is None else (
                f"declares columns= as {res.declared_type}, not a pydantic.BaseModel"
            )  # fmt: skip
            yield Finding(
                intro.info.name, f"resource.{res.name}",
                f"Resource '{res.name}' {what}; {_model_advice(intro.info.name, res)}",
            )  # fmt: skip


def incremental_accepts_window(ctx: ValidationContext) -> Iterator[Finding]:
    """Incremental cursors can take a backfill / --from/--to window (warning): dlt can bound
    them to datetimes, so `pipeline backfill` would not be refused."""
    for intro in ctx.live():
        for res in _resources(intro):
            if res.window_error is None:
                continue
            yield Finding(
                intro.info.name, f"incremental.{res.name}",
                f"Resource '{res.name}' cannot be backfilled or run with --from/--to: "
                f"{res.window_error}.",
                is_warning=True,
            )  # fmt: skip


def pydantic_model_forbids_extra(ctx: ValidationContext) -> Iterator[Finding]:
    """A resource's Pydantic model forbids extra fields (else dlt silently drops new columns)."""
    for intro in ctx.live():
        for res in _resources(intro):
            if res.model is not None and res.contract_columns == "discard_value":
                yield Finding(
                    intro.info.name, f"resource.{res.name}",
                    f"Resource '{res.name}' runs under schema_contract columns='discard_value' "
                    f"(unknown fields are dropped silently). Add this line to "
                    f"{res.model}: model_config = pydantic.ConfigDict(extra=\"forbid\")",
                )  # fmt: skip


def json_hints_for_dict_fields(ctx: ValidationContext) -> Iterator[Finding]:
    """Model fields typed dict / list[dict] load as data_type "json", not child tables."""
    for intro in ctx.live():
        for res in _resources(intro):
            if res.model is None or res.columns is None:
                continue
            for name in res.dict_fields:
                if (res.columns.get(name) or {}).get("data_type") != "json":
                    yield Finding(
                        intro.info.name, f"resource.{res.name}.{name}",
                        f"Field '{name}' of {res.model} is a dict/list[dict] but its "
                        f"column is not data_type 'json', so dlt would unnest it into child "
                        f"tables. Fix: {res.name}.apply_hints(columns={{'{name}': "
                        f"{{'data_type': 'json'}}}}) or drop the override.",
                    )  # fmt: skip


def incremental_cursor_required(ctx: ValidationContext) -> Iterator[Finding]:
    """Resources of recurring (non-@manual) sources declare an incremental cursor."""
    for intro in ctx.live():
        cfg = ctx.config.source(intro.info.name)
        if not cfg.schedule_valid or cfg.schedule == "@manual":
            continue
        for res in _resources(intro):
            if not res.incremental:
                yield Finding(
                    intro.info.name, f"incremental.{res.name}",
                    f"Resource '{res.name}' of {cfg.schedule} source '{intro.info.name}' has no "
                    f"incremental cursor, so every run reloads everything. Declare "
                    f"{_CURSOR_HOW.get(res.builder or '', _CURSOR_HOW[''])} or exempt it: "
                    f"{_exemption(intro.info.name, 'incremental_cursor_required')}",
                )  # fmt: skip


#: How to declare a cursor, by who built the resource (dlt's own sources take it as config).
_CURSOR_HOW = {
    "": "dlt.sources.incremental(...)",
    "sql_database": 'one: sql_table(..., incremental=dlt.sources.incremental("updated_at", '
    "initial_value=<a datetime>))",
    "rest_api": 'one in its endpoint config: "incremental": {"cursor_path": "updated_at", '
    '"initial_value": <a datetime>}',
    "filesystem": "one on the file listing: filesystem(...).apply_hints(incremental="
    'dlt.sources.incremental("modification_date", initial_value=<a datetime>))',
}


LIVE_RULES = (
    Rule("import_safety", "Source modules have no side effects at import time.", import_safety,
         exemptable=False, needs_import=True, uses_facts=True),
    Rule("no_resource_overlap", "Resource names are unique within a pipeline directory.",
         no_resource_overlap, needs_import=True, uses_facts=True),
    Rule("json_hints_for_dict_fields", "dict / list[dict] model fields load as json.",
         json_hints_for_dict_fields, needs_import=True, uses_facts=True),
    Rule("pydantic_columns_required", "Every resource declares columns=<Pydantic model>.",
         pydantic_columns_required, needs_import=True, uses_facts=True),
    Rule("pydantic_model_forbids_extra", 'Resource models set extra="forbid".',
         pydantic_model_forbids_extra, needs_import=True, uses_facts=True),
    Rule("incremental_accepts_window", "Incremental cursors can take a backfill window (warns).",
         incremental_accepts_window, needs_import=True, uses_facts=True),
    Rule("incremental_cursor_required", "Resources of recurring sources have a cursor (opt-in).",
         incremental_cursor_required, default_on=False, needs_import=True, uses_facts=True),
)  # fmt: skip
