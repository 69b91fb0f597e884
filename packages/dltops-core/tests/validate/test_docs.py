"""docs/validation.md documents every rule of the real catalog (and no rule that is gone)."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[4] / "docs"


def _catalog_ids() -> set[str]:
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.validate.airflow_rules import AIRFLOW_RULE

    registry = PluginRegistry()
    registry.load_all("validation_rule")
    return {r.name for r in registry.registrations("validation_rule")} | {AIRFLOW_RULE.id}


def _sections() -> dict[str, str]:
    text = (DOCS / "validation.md").read_text()
    parts = re.split(r"^### `([a-z0-9_]+)`\s*$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def test_every_rule_is_documented_with_what_why_fix_exempt() -> None:
    sections = _sections()
    ids = _catalog_ids()
    assert len(ids) >= 24
    missing = ids - set(sections)
    assert not missing, f"rules missing from docs/validation.md: {sorted(missing)}"
    for rule_id in ids:
        for label in ("**What:**", "**Why:**", "**Fix:**", "**Exempt:**"):
            assert label in sections[rule_id], f"{rule_id}: no {label}"


def test_no_documented_rule_is_gone() -> None:
    stale = set(_sections()) - _catalog_ids()
    assert not stale, f"docs/validation.md documents unknown rules: {sorted(stale)}"


def test_layout_doc_names_the_conventions() -> None:
    text = (DOCS / "project-layout.md").read_text()
    for rule_id in ("module_name_matches_section", "explicit_source_name", "schedule_required",
                    "config_section_required", "no_resource_overlap",
                    "pydantic_columns_required"):  # fmt: skip
        assert f"`{rule_id}`" in text
