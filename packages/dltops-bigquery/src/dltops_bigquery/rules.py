"""BigQuery validation rules: ``bigquery_partitioning`` and ``bigquery_partition_hints``.

Registration only imports dlt-ops' rule framework; neither rule imports google-cloud-bigquery.
``bigquery_partition_hints`` reads the sources' Phase-2 facts (possibly cached), not live objects.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from dlt_ops import hookimpl
from dlt_ops.destinations import engine_name
from dlt_ops.errors import ConfigError
from dlt_ops.project.facts import ResourceFacts
from dlt_ops.validate import Finding, Rule, ValidationContext

_PARTITION_KEYS = ("partition", "x-bigquery-partition")


def _escaped(comments: tuple[str, ...], what: str) -> bool:
    return any(c.lstrip("#").strip().startswith(f"no-{what}:") and
               c.split(":", 1)[1].strip() for c in comments)  # fmt: skip


def bigquery_partitioning(ctx: ValidationContext) -> Iterator[Finding]:
    """Every bigquery_adapter(...) call sets partition= and cluster= (or says why not in a
    ``# no-partition: <reason>`` / ``# no-cluster: <reason>`` comment just above it)."""
    for pipe in ctx.project.pipelines:
        for module in pipe.modules():
            for call in (c for c in module.calls if c.name == "bigquery_adapter"):
                missing = [
                    k for k in ("partition", "cluster")
                    if k not in call.keywords and not _escaped(call.comment_above, k)
                ]  # fmt: skip
                if not missing:
                    continue
                yield ctx.file_finding(
                    pipe.name, call.file, f"bigquery_adapter.{ctx.rel(call.file)}:{call.lineno}",
                    f"bigquery_adapter(...) without {' and '.join(k + '=' for k in missing)}; "
                    f"set them, or add '# no-{missing[0]}: <reason>' on the line above.",
                )  # fmt: skip


def _has_partition(resource: ResourceFacts) -> bool:
    if resource.columns is None:  # dynamic hints: nothing static to check
        return True
    return any(
        name != "_dlt_load_id" and any(col.get(k) for k in _PARTITION_KEYS)
        for name, col in resource.columns.items()
    )


def bigquery_partition_hints(ctx: ValidationContext) -> Iterator[Finding]:
    """Resources of sources loading into BigQuery declare a partition column hint."""
    for intro in ctx.live():
        try:
            engine = engine_name(ctx.config.destination_for(intro.info.name))
        except ConfigError:
            continue  # destination_capability reports it
        if engine != "bigquery" or intro.facts is None:
            continue
        for res in intro.facts.resources:
            if not _has_partition(res):
                yield Finding(
                    intro.info.name, f"resource.{res.name}.partition",
                    f"Resource '{res.name}' loads into BigQuery without a partition column; "
                    f"use bigquery_adapter({res.name}, partition=\"<column>\") or a column "
                    f"hint {{'partition': True}}.",
                )  # fmt: skip


RULES = (
    Rule("bigquery_partitioning", "bigquery_adapter() calls set partition= and cluster=.",
         bigquery_partitioning),
    Rule("bigquery_partition_hints", "BigQuery resources declare a partition column.",
         bigquery_partition_hints, needs_import=True, uses_facts=True),
)  # fmt: skip


@hookimpl
def dlt_ops_register_validation_rules(register: Any) -> None:
    """Register the BigQuery rules."""
    for rule in RULES:
        register(rule, name=rule.id)
