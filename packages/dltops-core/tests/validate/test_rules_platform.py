"""Destination, secret-backend, alert-sink and plugin-shipped (BigQuery, Airflow) rules."""

from __future__ import annotations

import pytest


def test_destination_capability_unknown_destination(make_project, run_validate, h, exempt):
    files = {"p/source/alpha.py": h.good_source("alpha")}
    cfg = h.section("alpha", 'destination = "nosuchdest"')
    found = h.by_rule(run_validate(make_project(files, cfg)), "destination_capability")
    assert not found[0].is_warning and "not a dlt destination" in found[0].message
    root = make_project(files, cfg + exempt("alpha", "destination_capability"))
    assert h.by_rule(run_validate(root), "destination_capability") == []


def test_destination_capability_core_tier_warns_then_errors(make_project, run_validate, h):
    files = {"p/source/alpha.py": h.good_source("alpha")}
    cfg = h.section("alpha", 'destination = "filesystem"')
    found = h.by_rule(run_validate(make_project(files, cfg)), "destination_capability")
    assert found[0].is_warning and "core mode" in found[0].message
    gated = "require_destination_adapter = true\n" + cfg
    found = h.by_rule(run_validate(make_project(files, gated)), "destination_capability")
    assert not found[0].is_warning and "require_destination_adapter" in found[0].message


def test_destination_capability_missing_destination(make_project, run_validate, h):
    root = make_project({"p/source/alpha.py": h.good_source("alpha")}, h.section("alpha"))
    cfg = (root / ".dlt/config.toml").read_text().replace('default_destination = "duckdb"', "")
    (root / ".dlt/config.toml").write_text(cfg)
    found = h.by_rule(run_validate(root), "destination_capability")
    assert "No destination configured" in found[0].message


def test_secret_backend_registered(make_project, run_validate, h, exempt) -> None:
    files = {"p/source/alpha.py": h.good_source("alpha")}
    cfg = h.section("alpha", 'airflow_var = "ALPHA"')
    found = h.by_rule(run_validate(make_project(files, cfg)), "secret_backend_registered")
    assert "no installed secret backend claims it" in found[0].message
    root = make_project(files, cfg + exempt("alpha", "secret_backend_registered"))
    assert h.by_rule(run_validate(root), "secret_backend_registered") == []


def test_airflow_conn_without_airflow_is_refused_not_ignored(make_project, run_validate, h):
    files = {"p/source/alpha.py": h.good_source("alpha")}
    cfg = h.section("alpha", 'airflow_conn = "dwh"')
    found = h.by_rule(run_validate(make_project(files, cfg)), "secret_backend_registered")
    assert "sets airflow_conn = 'dwh' but no installed secret backend" in found[0].message


def test_secret_backend_broken_secrets_toml(make_project, run_validate, h) -> None:
    root = make_project({"p/source/alpha.py": h.good_source("alpha")}, h.section("alpha"))
    (root / ".dlt/secrets.toml").write_text("[broken\n")
    found = h.by_rule(run_validate(root), "secret_backend_registered")
    assert "malformed TOML" in found[0].message


def test_alert_sink_registered_and_switch(make_project, run_validate, h) -> None:
    files = {"p/source/alpha.py": h.good_source("alpha")}
    cfg = 'alert_sinks = ["log", "pagerduty"]\n' + h.section("alpha")
    found = h.by_rule(run_validate(make_project(files, cfg)), "alert_sink_registered")
    assert [f.source for f in found] == ["dlt_ops"] and "pagerduty" in found[0].message
    # a project-level rule has no per-source exemption; [dlt_ops.rules] switches it off
    off = 'alert_sinks = ["pagerduty"]\n[dlt_ops.rules]\nalert_sink_registered = false\n'
    root = make_project(files, off + h.section("alpha"))
    assert h.by_rule(run_validate(root), "alert_sink_registered") == []


def test_ledger_sink_registered(make_project, run_validate, h) -> None:
    files = {"p/source/alpha.py": h.good_source("alpha")}
    cfg = 'ledger_sinks = ["destination", "jsnol"]\n' + h.section("alpha")
    found = h.by_rule(run_validate(make_project(files, cfg)), "ledger_sink_registered")
    assert [f.field for f in found] == ["ledger_sinks"] and "'jsnol'" in found[0].message
    ok = make_project(files, 'ledger_sinks = ["destination", "jsonl"]\n' + h.section("alpha"))
    assert h.by_rule(run_validate(ok), "ledger_sink_registered") == []


BQ_SOURCE = """
import dlt
import pydantic
from dlt.destinations.adapters import bigquery_adapter


class Row(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    id: int


@dlt.resource(name="rows", columns=Row)
def rows():
    yield {"id": 1}


@dlt.source(name="alpha")
def alpha_source():
    return bigquery_adapter(rows, cluster=["id"])
"""


def test_bigquery_partitioning(make_project, run_validate, h, exempt) -> None:
    files = {"p/source/alpha.py": BQ_SOURCE}
    found = h.by_rule(run_validate(make_project(files, h.section("alpha"))),
                      "bigquery_partitioning")  # fmt: skip
    assert "partition=" in found[0].message and found[0].source == "alpha"
    commented = BQ_SOURCE.replace("    return bigquery", "    # no-partition: tiny table\n"
                                  "    return bigquery")  # fmt: skip
    root = make_project({"p/source/alpha.py": commented}, h.section("alpha"))
    assert h.by_rule(run_validate(root), "bigquery_partitioning") == []
    root = make_project(files, h.section("alpha") + exempt("alpha", "bigquery_partitioning"))
    assert h.by_rule(run_validate(root), "bigquery_partitioning") == []


def test_bigquery_partition_hints(make_project, run_validate, h, exempt) -> None:
    files = {"p/source/alpha.py": h.good_source("alpha")}
    cfg = h.section("alpha", 'destination = "bigquery"')
    found = h.by_rule(run_validate(make_project(files, cfg)), "bigquery_partition_hints")
    assert found[0].field == "resource.rows.partition"
    partitioned = BQ_SOURCE.replace('cluster=["id"]', 'partition="id", cluster=["id"]')
    root = make_project({"p/source/alpha.py": partitioned}, cfg)
    assert h.by_rule(run_validate(root), "bigquery_partition_hints") == []
    root = make_project(files, cfg + exempt("alpha", "bigquery_partition_hints"))
    assert h.by_rule(run_validate(root), "bigquery_partition_hints") == []


@pytest.fixture
def with_airflow(monkeypatch, plugin_registry):
    """Core + Airflow rule providers as inline plugins, Airflow reported as installed."""
    from dlt_ops.builtin import secrets_toml
    from dlt_ops.builtin import validation_rules as builtin
    from dlt_ops.validate import airflow_rules

    monkeypatch.setattr(airflow_rules, "airflow_available", lambda: True)
    return plugin_registry(
        ("validation_rule", "core_rules", builtin),
        ("validation_rule", "airflow_rules", airflow_rules),
        ("secret_backend", "secrets_toml", secrets_toml),
    )


def test_airflow_rule_only_when_airflow_is_installed(plugin_registry) -> None:
    from dlt_ops.validate import airflow_rules

    registry = plugin_registry(("validation_rule", "airflow_rules", airflow_rules))
    names = [r.name for r in registry.registrations("validation_rule")]
    assert names == (["airflow_var_required"] if airflow_rules.airflow_available() else [])


def test_airflow_var_required(make_project, run_validate, h, exempt, with_airflow) -> None:
    src = h.good_source("alpha").replace("def alpha_source():",
                                         "def alpha_source(key=dlt.secrets.value):")  # fmt: skip
    files = {"p/source/alpha.py": src}
    found = h.by_rule(run_validate(make_project(files, h.section("alpha")), with_airflow),
                      "airflow_var_required")  # fmt: skip
    assert "airflow_var" in found[0].message
    root = make_project(files, h.section("alpha") + exempt("alpha", "airflow_var_required"))
    assert h.by_rule(run_validate(root, with_airflow), "airflow_var_required") == []
