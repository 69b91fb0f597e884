"""Rules that inspect imported, instantiated sources: each fires and each exemption works."""

from __future__ import annotations

TWO_SOURCES = """
import dlt
import pydantic

class Row(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    id: int

@dlt.resource(name="events", columns=Row)
def events():
    yield {"id": 1}
"""
USER = """
import dlt
from ..resource.shared import events

@dlt.source(name="{name}")
def {name}_source():
    return events
"""


def test_no_resource_overlap(make_project, run_validate, h, exempt) -> None:
    files = {
        "p/resource/shared.py": TWO_SOURCES,
        "p/source/alpha.py": USER.format(name="alpha"),
        "p/source/beta.py": USER.format(name="beta"),
    }
    cfg = h.section("alpha") + h.section("beta")
    found = h.by_rule(run_validate(make_project(files, cfg)), "no_resource_overlap")
    assert [f.source for f in found] == ["beta"]
    assert "already defined in source 'alpha'" in found[0].message
    root = make_project(files, cfg + exempt("beta", "no_resource_overlap"))
    assert h.by_rule(run_validate(root), "no_resource_overlap") == []


def test_pydantic_columns_required(make_project, run_validate, h, exempt) -> None:
    src = h.good_source("alpha").replace(", columns=Row", "")
    files = {"p/source/alpha.py": src}
    found = h.by_rule(run_validate(make_project(files, h.section("alpha"))),
                      "pydantic_columns_required")  # fmt: skip
    assert found[0].field == "resource.rows"
    dict_cols = h.good_source("alpha").replace("columns=Row", 'columns={"id": {"data_type": '
                                                "\"bigint\"}}")  # fmt: skip
    found = h.by_rule(
        run_validate(make_project({"p/source/alpha.py": dict_cols}, h.section("alpha"))),
        "pydantic_columns_required",
    )
    assert "not a pydantic.BaseModel" in found[0].message
    root = make_project(files, h.section("alpha") + exempt("alpha", "pydantic_columns_required"))
    assert h.by_rule(run_validate(root), "pydantic_columns_required") == []


def test_pydantic_model_forbids_extra(make_project, run_validate, h, exempt) -> None:
    src = h.good_source("alpha").replace('    model_config = pydantic.ConfigDict(extra="forbid")\n',
                                         "")  # fmt: skip
    files = {"p/source/alpha.py": src}
    found = h.by_rule(run_validate(make_project(files, h.section("alpha"))),
                      "pydantic_model_forbids_extra")  # fmt: skip
    assert 'extra="forbid"' in found[0].message and "Row" in found[0].message
    root = make_project(files, h.section("alpha") + exempt("alpha", "pydantic_model_forbids_extra"))
    assert h.by_rule(run_validate(root), "pydantic_model_forbids_extra") == []


def test_json_hints_for_dict_fields(make_project, run_validate, h, exempt) -> None:
    # dlt 1.31 maps dict fields of a model to json itself; an override that keeps the model
    # but changes the computed hint is what the rule guards against, so plant one directly.
    src = h.good_source("alpha").replace(
        "    id: int\n", "    id: int\n    payload: dict[str, int] | None = None\n"
    ).replace("    return rows", '    rows._hints["columns"]["payload"]["data_type"] = "text"\n'
                                  "    return rows")  # fmt: skip
    files = {"p/source/alpha.py": src}
    found = h.by_rule(run_validate(make_project(files, h.section("alpha"))),
                      "json_hints_for_dict_fields")  # fmt: skip
    assert [f.field for f in found] == ["resource.rows.payload"]
    root = make_project(files, h.section("alpha") + exempt("alpha", "json_hints_for_dict_fields"))
    assert h.by_rule(run_validate(root), "json_hints_for_dict_fields") == []
    plain = h.good_source("alpha").replace("    id: int\n", "    id: int\n    payload: dict\n")
    clean = make_project({"p/source/alpha.py": plain}, h.section("alpha"))
    assert h.by_rule(run_validate(clean), "json_hints_for_dict_fields") == []


def test_incremental_cursor_required_is_off_by_default(make_project, run_validate, h) -> None:
    root = make_project({"p/source/alpha.py": h.good_source("alpha")}, h.section("alpha"))
    assert h.by_rule(run_validate(root), "incremental_cursor_required") == []


def test_incremental_cursor_required(make_project, run_validate, h, exempt) -> None:
    files = {"p/source/alpha.py": h.good_source("alpha")}
    on = "[dlt_ops.rules]\nincremental_cursor_required = true\n" + h.section("alpha")
    found = h.by_rule(run_validate(make_project(files, on)), "incremental_cursor_required")
    assert found[0].field == "incremental.rows"
    with_cursor = h.good_source("alpha").replace(
        "def rows():", 'def rows(ts=dlt.sources.incremental("id")):'
    )
    root = make_project({"p/source/alpha.py": with_cursor}, on)
    assert h.by_rule(run_validate(root), "incremental_cursor_required") == []
    root = make_project(files, on + exempt("alpha", "incremental_cursor_required"))
    assert h.by_rule(run_validate(root), "incremental_cursor_required") == []


def test_failed_instantiation_reduces_coverage(make_project, run_validate, h) -> None:
    src = h.good_source("alpha").replace("def alpha_source():",
                                         "def alpha_source(token=dlt.secrets.value):")  # fmt: skip
    report = run_validate(make_project({"p/source/alpha.py": src}, h.section("alpha")))
    fields = {f.field for f in report.errors}
    assert {"instantiate", "validation_coverage"} <= fields
