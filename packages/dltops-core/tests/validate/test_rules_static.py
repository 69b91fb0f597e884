"""Each config/AST rule fires, and a per-source exemption with a reason silences it."""

from __future__ import annotations

import dataclasses

import pytest


def test_config_section_required(make_project, run_validate, h) -> None:
    root = make_project({"p/source/alpha.py": h.good_source("alpha")})
    report = run_validate(root)
    assert [f.source for f in h.by_rule(report, "config_section_required")] == ["alpha"]


def test_config_section_required_exemption(make_project, h) -> None:
    # An exemption table creates [sources.alpha] itself, so prove the filter on the config
    # object: a section-less source whose exemptions name the rule is silenced.
    from dlt_ops.config import SourceConfig, load_project_config
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.project import discover
    from dlt_ops.validate.engine import validate_project

    root = make_project({"p/source/alpha.py": h.good_source("alpha")})
    config = load_project_config(root)
    ex = SourceConfig("alpha", rule_exemptions={"config_section_required": "legacy"})
    config = dataclasses.replace(config, sources={"alpha": ex})
    report = validate_project(config, PluginRegistry(), discover(root))
    assert h.by_rule(report, "config_section_required") == []


@pytest.mark.parametrize(
    ("schedule", "needle"), [("", "Missing 'schedule'"), ('schedule = "@yearly"', "Invalid")]
)
def test_schedule_required(make_project, run_validate, h, exempt, schedule, needle) -> None:
    files = {"p/source/alpha.py": h.good_source("alpha")}
    cfg = f"\n[sources.alpha.dlt_ops]\n{schedule}\n"
    found = h.by_rule(run_validate(make_project(files, cfg)), "schedule_required")
    assert needle in found[0].message
    cfg += '\n[sources.alpha.dlt_ops.rule_exemptions]\nschedule_required = "manual only"\n'
    assert h.by_rule(run_validate(make_project(files, cfg)), "schedule_required") == []


def test_explicit_source_name(make_project, run_validate, h, exempt) -> None:
    src = h.good_source("alpha").replace('@dlt.source(name="alpha")', "@dlt.source")
    files = {"p/source/alpha.py": src}
    found = h.by_rule(run_validate(make_project(files, h.section("alpha"))), "explicit_source_name")
    assert found and "alpha_source" in found[0].message
    root = make_project(files, h.section("alpha") + exempt("alpha", "explicit_source_name"))
    assert h.by_rule(run_validate(root), "explicit_source_name") == []


def test_module_name_matches_section(make_project, run_validate, h, exempt) -> None:
    files = {"p/source/beta.py": h.good_source("alpha")}
    found = h.by_rule(
        run_validate(make_project(files, h.section("alpha"))), "module_name_matches_section"
    )
    assert "'beta.py'" in found[0].message
    root = make_project(files, h.section("alpha") + exempt("alpha", "module_name_matches_section"))
    assert h.by_rule(run_validate(root), "module_name_matches_section") == []


def test_orphan_config_sections(make_project, run_validate, h, exempt) -> None:
    files = {"p/source/alpha.py": h.good_source("alpha")}
    cfg = h.section("alpha") + h.section("ghost")
    found = h.by_rule(run_validate(make_project(files, cfg)), "orphan_config_sections")
    assert [(f.source, f.is_warning) for f in found] == [("ghost", True)]
    root = make_project(files, cfg + exempt("ghost", "orphan_config_sections"))
    assert h.by_rule(run_validate(root), "orphan_config_sections") == []


def test_no_orphan_warning_for_a_source_that_failed_to_import(make_project, run_validate, h):
    files = {"p/source/alpha.py": h.good_source("alpha") + "\nraise KeyError('boom')\n"}
    report = run_validate(make_project(files, h.section("alpha")))
    assert h.by_rule(report, "orphan_config_sections") == []
    assert any(f.field == "import" and "KeyError" in f.message for f in report.findings)


MULTI = """
import dlt
from ..resource.shared import Row

@dlt.resource(columns=Row)
def {res}():
    yield {{"id": 1}}

@dlt.source(name="{name}")
def {name}_source():
    return {res}
"""
SHARED_MODEL = """
import pydantic

class Row(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    id: int
"""


def test_explicit_resource_name_multi_source(make_project, run_validate, h, exempt) -> None:
    files = {
        "p/source/alpha.py": MULTI.format(name="alpha", res="a_rows"),
        "p/source/beta.py": MULTI.format(name="beta", res="b_rows"),
        "p/resource/shared.py": SHARED_MODEL,
    }
    cfg = h.section("alpha") + h.section("beta")
    found = h.by_rule(run_validate(make_project(files, cfg)), "explicit_resource_name_multi_source")
    assert sorted(f.source for f in found) == ["alpha", "beta"]
    cfg += exempt("alpha", "explicit_resource_name_multi_source")
    found = h.by_rule(run_validate(make_project(files, cfg)), "explicit_resource_name_multi_source")
    assert [f.source for f in found] == ["beta"]


def test_cursor_not_load_timestamp(make_project, run_validate, h, exempt) -> None:
    src = h.good_source("alpha").replace(
        "def rows():", 'def rows(ts=dlt.sources.incremental("loaded_at")):'
    )
    files = {"p/source/alpha.py": src}
    cfg = 'load_timestamp_column = "loaded_at"\n' + h.section("alpha")
    found = h.by_rule(run_validate(make_project(files, cfg)), "cursor_not_load_timestamp")
    assert found and found[0].source == "alpha"
    root = make_project(files, cfg + exempt("alpha", "cursor_not_load_timestamp"))
    assert h.by_rule(run_validate(root), "cursor_not_load_timestamp") == []


def test_schema_contract_declared(make_project, run_validate, h, exempt) -> None:
    evolve = '{"tables": "evolve", "columns": "evolve", "data_type": "freeze"}'
    src = h.good_source("alpha").replace("columns=Row)", f"columns=Row, schema_contract={evolve})")
    files = {"p/source/alpha.py": src}
    found = h.by_rule(run_validate(make_project(files, h.section("alpha"))),
                      "schema_contract_declared")  # fmt: skip
    assert "schema_contract_evolve_reason" in found[0].message
    with_reason = h.section("alpha", 'schema_contract_evolve_reason = "upstream adds fields"')
    assert h.by_rule(run_validate(make_project(files, with_reason)),
                     "schema_contract_declared") == []  # fmt: skip
    root = make_project(files, h.section("alpha") + exempt("alpha", "schema_contract_declared"))
    assert h.by_rule(run_validate(root), "schema_contract_declared") == []


def test_same_resource_name_in_two_pipelines_is_fine(make_project, run_validate, h) -> None:
    files = {"p/source/alpha.py": h.good_source("alpha", "events"),
             "q/source/beta.py": h.good_source("beta", "events")}  # fmt: skip
    report = run_validate(make_project(files, h.section("alpha") + h.section("beta")))
    assert report.errors == []
