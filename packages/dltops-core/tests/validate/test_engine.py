"""Catalog resolution, config findings, strictness, third-party rules, CLI output contract."""

from __future__ import annotations

import json
import types

from dlt_ops import hookimpl
from dlt_ops.validate import Finding, Rule


def test_config_findings(make_project, run_validate, h) -> None:
    cfg = (
        "staleness_dayz = 3\n[dlt_ops.rules]\nstale_source = false\n"
        + h.section("alpha", "scheduel = 1")
        + '\n[sources.alpha.dlt_ops.rule_exemptions]\nimport_safety = "no"\n'
        + 'nonsense_rule = "x"\nschedule_required = "  "\n'
    )
    report = run_validate(make_project({"p/source/alpha.py": h.good_source("alpha")}, cfg))
    msgs = {f.field: (f.message, f.is_warning) for f in report.findings}
    assert "did you mean 'staleness_days'" in msgs["dlt_ops.staleness_dayz"][0]
    assert msgs["dlt_ops.staleness_dayz"][1] is True
    assert "did you mean 'schedule'" in msgs["sources.alpha.dlt_ops.scheduel"][0]
    assert "unknown rule id 'stale_source'" in msgs["rules.stale_source"][0]
    assert "cannot be exempted" in msgs["rule_exemptions.import_safety"][0]
    assert "unknown rule id 'nonsense_rule'" in msgs["rule_exemptions.nonsense_rule"][0]
    assert "non-empty reason" in msgs["rule_exemptions.schedule_required"][0]


def test_strict_promotes_warnings(make_project, run_validate, h) -> None:
    root = make_project({"p/source/alpha.py": h.good_source("alpha")},
                        h.section("alpha") + h.section("ghost"))  # fmt: skip
    assert run_validate(root).errors == [] and run_validate(root).warnings
    assert run_validate(root, strict=True).warnings == []
    assert run_validate(root, strict=True).errors


def _acme_plugin(crash: bool = False) -> types.ModuleType:
    def no_foo(ctx):
        if crash:
            raise RuntimeError("acme is broken")
        for s in ctx.sources():
            if "foo" in s.name:
                yield Finding(s.name, "name", "no foo allowed")

    mod = types.ModuleType("acme_rules")

    @hookimpl
    def dlt_ops_register_validation_rules(register):
        register(Rule("acme_no_foo", "Source names never contain foo.", no_foo), name="acme_no_foo")

    mod.dlt_ops_register_validation_rules = dlt_ops_register_validation_rules
    return mod


def test_third_party_rule(make_project, run_validate, h, exempt, plugin_registry, capsys):
    from dlt_ops.builtin import secrets_toml
    from dlt_ops.builtin import validation_rules as builtin
    from dlt_ops.cli.validate import _show_rules
    from dlt_ops.validate.engine import resolve_catalog

    registry = plugin_registry(
        ("validation_rule", "core_rules", builtin),
        ("validation_rule", "acme", _acme_plugin()),
        ("secret_backend", "secrets_toml", secrets_toml),
    )
    _show_rules(resolve_catalog(registry, {}))
    out = capsys.readouterr().out
    assert "Resolved rules (27):" in out
    line = next(ln for ln in out.splitlines() if "acme_no_foo" in ln)
    assert "on" in line and "<inline acme_rules>" in line
    files = {"p/source/foo.py": h.good_source("foo")}
    found = h.by_rule(run_validate(make_project(files, h.section("foo")), registry), "acme_no_foo")
    assert found[0].message == "no foo allowed"
    root = make_project(files, h.section("foo") + exempt("foo", "acme_no_foo"))
    assert h.by_rule(run_validate(root, registry), "acme_no_foo") == []


def test_crashing_rule_is_a_finding_not_a_crash(make_project, run_validate, h, plugin_registry):
    from dlt_ops.builtin import alert_sinks, ledger_sinks, secrets_toml
    from dlt_ops.builtin import validation_rules as builtin

    registry = plugin_registry(
        ("validation_rule", "core_rules", builtin),
        ("validation_rule", "acme", _acme_plugin(crash=True)),
        ("secret_backend", "secrets_toml", secrets_toml),
        ("ledger_sink", "destination", ledger_sinks),  # the default sinks, built in
        ("alert_sink", "log", alert_sinks),
    )
    report = run_validate(make_project({"p/source/a.py": h.good_source("a")}, h.section("a")),
                          registry)  # fmt: skip
    assert [f.field for f in report.errors] == ["rules.acme_no_foo"]
    assert "acme is broken" in report.errors[0].message


def test_every_catalog_slot_is_filled(make_project, run_validate, h) -> None:
    root = make_project({"p/source/alpha.py": h.good_source("alpha")}, h.section("alpha"))
    report = run_validate(root)
    assert set(report.not_checked) == set()  # stale_sources and the assertion rules shipped
    with_assertions = h.section("alpha") + (
        "\n[sources.alpha.dlt_ops.assertions.nope]\nmin_rows_per_load = 1\n"
    )
    report = run_validate(make_project({"p/source/alpha.py": h.good_source("alpha")},
                                       with_assertions))  # fmt: skip
    assert any(f.rule == "assertion_config_valid" and not f.is_warning for f in report.findings)


def test_cli_json_and_exit_codes(make_project, cli, h) -> None:
    root = make_project({"p/source/alpha.py": h.good_source("alpha")}, h.section("ghost"))
    result = cli("--root", str(root), "pipeline", "validate", "--json")
    findings = json.loads(result.stdout)  # exactly one JSON document
    assert result.exit_code == 1
    assert {f["field"] for f in findings} >= {"config_section", "schedule"}
    human = cli("--root", str(root), "pipeline", "validate")
    assert "✗" in human.stdout and human.exit_code == 1
    fixed = make_project({"p/source/alpha.py": h.good_source("alpha")}, h.section("alpha"))
    assert cli("--root", str(fixed), "pipeline", "validate").exit_code == 0


def test_cli_show_resolved_rules(make_project, cli, h) -> None:
    root = make_project({}, "[dlt_ops.rules]\nincremental_cursor_required = true\n")
    result = cli("--root", str(root), "pipeline", "validate", "--show-resolved-rules")
    assert result.exit_code == 0
    line = next(ln for ln in result.stdout.splitlines() if "incremental_cursor_required" in ln)
    assert " on " in line and "dltops-core" in line
    assert "provided later" not in result.stdout  # every catalog slot ships a real check
    bad = make_project({}, "[dlt_ops.rules]\nstale_source = true\n")
    result = cli("--root", str(bad), "pipeline", "validate", "--show-resolved-rules")
    assert result.exit_code == 1 and "stale_source" in result.stdout


def test_cli_config_error_exits_2(make_project, cli) -> None:
    root = make_project({}, "staleness_days = -1\n")
    assert cli("--root", str(root), "pipeline", "validate").exit_code == 2
