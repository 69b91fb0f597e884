"""Validate rules for assertions and their preflight twins (the same checks refuse a run)."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from dlt_ops.errors import AssertionConfigError, DestinationCapabilityError

from .conftest import rows


def _validate(p):  # noqa: ANN001, ANN202
    from dlt_ops.config import load_project_config
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.project import discover
    from dlt_ops.validate.engine import validate_project

    config = load_project_config(p.root)
    return validate_project(config, PluginRegistry(picks=config.plugins), discover(p.root))


def _by_rule(report, rule: str) -> dict[str, str]:  # noqa: ANN001
    return {f.field: f.message for f in report.findings if f.rule == rule}


def test_config_valid_reports_every_structural_and_typed_problem(make_project) -> None:
    p = make_project().configure("""
        [sources.src.dlt_ops.assertions.events]
        on_failure = "explode"
        min_rows_per_load = { value = 1, on_failure = "quarantine" }
        max_rows_per_load = 0
        no_such_type = 3
        required_columns = { value = ["kind"], on_failure = "warn", max_violations = 2 }
        unique_columns = { value = ["id"], extra = 1 }

        [[sources.src.dlt_ops.assertions.events.custom]]
        predicate = "not a path"

        [sources.src.dlt_ops.assertions.ghost]
        min_rows_per_load = 1
    """)
    found = _by_rule(_validate(p), "assertion_config_valid")
    assert "fail, warn, quarantine; got 'explode'" in found["assertions.events.on_failure"]
    assert "is batch-scoped" in found["assertions.events.min_rows_per_load"]
    assert "max_rows_per_load must be an integer >= 1, got 0" in found[
        "assertions.events.max_rows_per_load"]  # fmt: skip
    assert "unknown assertion type 'no_such_type'" in found["assertions.events.no_such_type"]
    assert 'apply to on_failure = "fail" only' in found["assertions.events.required_columns"]
    assert "unknown parameter(s) extra" in found["assertions.events.unique_columns"]
    assert "module:attr" in found["assertions.events.custom[0].predicate"]
    assert "has no resource 'ghost'" in found["assertions.ghost"]


def test_columns_exist_checks_the_pydantic_model(make_project) -> None:
    p = make_project().configure("""
        [sources.src.dlt_ops.assertions.typed]
        unique_columns = ["id", "nope"]
        required_columns = ["kind"]
    """)
    report = _validate(p)
    assert _by_rule(report, "assertion_config_valid") == {}
    found = _by_rule(report, "assertion_columns_exist")
    assert list(found) == ["assertions.typed.unique_columns"]
    assert "column(s) nope not declared" in found["assertions.typed.unique_columns"]


def test_required_columns_on_a_defaulted_model_field_warns(make_project) -> None:
    p = make_project().configure("""
        [sources.src.dlt_ops.assertions.typed]
        required_columns = ["kind", "note"]
    """)
    report = _validate(p)
    found = [f for f in report.findings if f.rule == "assertion_columns_exist"]
    assert [(f.field, f.is_warning) for f in found] == [("assertions.typed.required_columns", True)]
    assert "'note'" in found[0].message and "default" in found[0].message
    assert "'kind'" not in found[0].message


def test_predicate_probe_is_sandboxed(make_project) -> None:
    p = make_project().configure("""
        [[sources.src.dlt_ops.assertions.events.custom]]
        predicate = "quality:has_kind"
        [[sources.src.dlt_ops.assertions.events.custom]]
        predicate = "noisy:check"
        [[sources.src.dlt_ops.assertions.events.custom]]
        predicate = "quality:missing"
        [[sources.src.dlt_ops.assertions.events.custom]]
        predicate = "quality:NOT_CALLABLE"
    """)
    (p.root / "quality.py").write_text("NOT_CALLABLE = 3\n\ndef has_kind(row):\n"
                                       "    return 'kind' in row\n")  # fmt: skip
    marker = p.root / "written-at-import.txt"
    (p.root / "noisy.py").write_text(
        f"open({str(marker)!r}, 'w').write('x')\n\ndef check(row):\n    return True\n"
    )
    found = _by_rule(_validate(p), "assertion_predicate_resolvable")
    assert "assertions.events.custom[0]" not in found
    assert "disk-write at import of predicate" in found["assertions.events.custom[1]"]
    assert "AttributeError" in found["assertions.events.custom[2]"]
    assert "not a callable" in found["assertions.events.custom[3]"]


def test_custom_predicate_resolves_from_the_project_root_at_run_time(make_project) -> None:
    p = make_project().configure("""
        [[sources.src.dlt_ops.assertions.events.custom]]
        predicate = "checks.rules:has_kind"
        on_failure = "quarantine"
    """)
    (p.root / "checks").mkdir()
    (p.root / "checks" / "__init__.py").write_text("")
    (p.root / "checks" / "rules.py").write_text("def has_kind(row):\n    return 'kind' in row\n")
    p.data(rows(1, 2) + rows(3, kind=None))
    outcome = p.run()
    assert outcome.ok, outcome.error
    assert p.duck("SELECT id FROM ds.events ORDER BY id") == [(1,), (2,)]
    ((atype, violation, params),) = p.duck(
        "SELECT assertion_type, violation, assertion_params FROM ds._dlt_rejected"
    )
    assert (atype, violation) == ("custom", "predicate checks.rules:has_kind failed")
    assert params == '{"predicate": "checks.rules:has_kind"}'


@pytest.mark.parametrize(
    ("resource", "table", "needle"),
    [
        ("events", 'min_rows_per_load = { value = 1, on_failure = "quarantine" }',
         "is batch-scoped"),
        ("typed", 'unique_columns = ["id", "nope"]', "column(s) nope"),
        ("events", '[[sources.src.dlt_ops.assertions.events.custom]]\npredicate = "gone:f"',
         "not resolvable: ModuleNotFoundError"),
    ],
)  # fmt: skip
def test_preflight_refuses_invalid_assertions_before_extract(make_project, resource, table,
                                                             needle) -> None:  # fmt: skip
    p = make_project().configure(f"[sources.src.dlt_ops.assertions.{resource}]\n{table}\n")
    p.data(rows(1))
    if needle == "is batch-scoped":  # wrong from the config alone: refused before any row
        with pytest.raises(AssertionConfigError, match="is batch-scoped") as refused:
            p.run("events", "typed")
        assert refused.value.exit_code == 2
        assert str(refused.value).startswith("invalid assertion config for source 'src': ")
        assert not (p.root / "src_pipeline.duckdb").exists()
        return
    outcome = p.run("events", "typed")
    assert isinstance(outcome.error, AssertionConfigError), outcome.error
    assert needle in str(outcome.error)
    assert outcome.record.status == "failed" and outcome.record.records_extracted is None
    tables = {t for (t,) in p.duck("SELECT table_name FROM information_schema.tables")}
    assert "events" not in tables


def test_quarantine_on_core_tier_is_refused_at_validate_and_preflight(make_project) -> None:
    p = make_project("filesystem").configure(
        """
        [sources.src.dlt_ops.assertions.events]
        unique_columns = { value = ["id"], on_failure = "quarantine" }
        """,
        extra='\n[destination.filesystem]\nbucket_url = "{root}/files"\n',
    )
    text = (p.root / ".dlt" / "config.toml").read_text().replace("{root}", str(p.root))
    (p.root / ".dlt" / "config.toml").write_text(text)
    report = _validate(p)
    capability = [f for f in report.findings if f.rule == "destination_capability"]
    assert any("assertion quarantine" in f.message and not f.is_warning for f in capability)
    p.data(rows(1))
    outcome = p.run()
    assert isinstance(outcome.error, DestinationCapabilityError)
    assert not (p.root / "files").exists()


def test_the_preflight_checks_only_the_selected_resources(make_project) -> None:
    p = make_project().configure("""
        [sources.src.dlt_ops.assertions.typed]
        unique_columns = ["id", "nope"]
    """)
    p.data(rows(1, 2))
    with capture_logs() as logs:
        outcome = p.run("events")  # typed's columns are checked when typed runs
    assert outcome.ok, outcome.error
    assert "assertions.summary" not in [e["event"] for e in logs]  # no gate: nothing asserted


def test_assertions_for_a_resource_the_source_lacks_refuse_the_run(make_project) -> None:
    p = make_project().configure("""
        [sources.src.dlt_ops.assertions.gone]
        unique_columns = ["id"]
    """)
    p.data(rows(1))
    outcome = p.run("events")
    assert isinstance(outcome.error, AssertionConfigError), outcome.error
    assert str(outcome.error).startswith(
        "invalid assertion config for source 'src': [assertions.gone] source 'src' has no "
        "resource 'gone' (its resources: events, typed)"
    ), outcome.error


def test_the_columns_exemption_is_honoured_at_run_time(make_project) -> None:
    exempt = """
        [sources.src.dlt_ops.rule_exemptions]
        assertion_columns_exist = "the model is loose on purpose"

        [sources.src.dlt_ops.assertions.typed]
        unique_columns = ["id", "nope"]
    """
    gone = '\n[sources.src.dlt_ops.assertions.gone]\nunique_columns = ["id"]\n'
    p = make_project().configure(exempt + gone)
    p.data(rows(1), typed=[{"id": 1, "kind": "a"}])
    refused = p.run("typed")  # the exemption waives the columns, never another issue
    assert isinstance(refused.error, AssertionConfigError), refused.error
    assert "no resource 'gone'" in str(refused.error) and "nope" not in str(refused.error)
    outcome = p.configure(exempt).run("typed")
    assert outcome.ok, outcome.error
