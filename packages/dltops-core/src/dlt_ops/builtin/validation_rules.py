"""Registers the core validation rules (entry point ``core_rules`` in dltops-core).

It lives with the built-in plugins, above every feature: the rules come from validate, the
assertions and the ledger, and collecting them here keeps validate from importing upwards.
"""

from __future__ import annotations

from dlt_ops import hookimpl
from dlt_ops.plugins import Register


@hookimpl
def dlt_ops_register_validation_rules(register: Register) -> None:
    """Register the core rules, in :data:`CORE_RULE_ORDER`."""
    from dlt_ops.assertions.rules import ASSERTION_RULES
    from dlt_ops.ledger.stale_rule import STALE_SOURCES
    from dlt_ops.validate.rules_live import LIVE_RULES
    from dlt_ops.validate.rules_platform import PLATFORM_RULES
    from dlt_ops.validate.rules_static import STATIC_RULES

    rules = (*LIVE_RULES, *STATIC_RULES, *PLATFORM_RULES, *ASSERTION_RULES, STALE_SOURCES)
    by_id = {r.id: r for r in rules}
    for rule_id in CORE_RULE_ORDER:
        register(by_id[rule_id], name=rule_id)


#: Reference §3.2 order.
CORE_RULE_ORDER = (
    "import_safety",
    "project_links",
    "config_section_required",
    "schedule_required",
    "explicit_source_name",
    "module_name_matches_section",
    "orphan_config_sections",
    "no_resource_overlap",
    "json_hints_for_dict_fields",
    "pydantic_columns_required",
    "pydantic_model_forbids_extra",
    "schema_contract_declared",
    "explicit_resource_name_multi_source",
    "cursor_not_load_timestamp",
    "incremental_cursor_required",
    "incremental_accepts_window",
    "run_plugins_load",
    "secret_backend_registered",
    "secrets_not_in_config",
    "alert_sink_registered",
    "ledger_sink_registered",
    "destination_capability",
    "stale_sources",
    "assertion_config_valid",
    "assertion_columns_exist",
    "assertion_predicate_resolvable",
)
