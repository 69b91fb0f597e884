"""The runtime preflight: every condition raises its typed error; a healthy source passes."""

from __future__ import annotations

import pytest

from dlt_ops import errors


@pytest.fixture
def prepared(make_project, h):
    """``prepare(config_text, source_text=None)`` → (config, registry, info, dlt source)."""
    from dlt_ops.config import load_project_config
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.project import discover
    from dlt_ops.project.introspect import load_source

    def prepare(extra: str = "", src: str | None = None, registry=None):
        root = make_project({"p/source/alpha.py": src or h.good_source("alpha")},
                            extra + h.section("alpha"))  # fmt: skip
        config = load_project_config(root)
        loaded = load_source(discover(root), config, "alpha")
        return config, registry or PluginRegistry(), loaded.info, loaded.source_fn()

    return prepare


def test_healthy_source_passes(prepared) -> None:
    from dlt_ops.validate.preflight import run_preflight

    report = run_preflight(*prepared())
    assert report.tier == "full" and report.secret_backend == "secrets_toml"
    assert report.destination.adapter is not None


def test_unknown_rule_id(prepared) -> None:
    from dlt_ops.validate.preflight import run_preflight

    with pytest.raises(errors.UnknownRuleIdError, match="stale_source"):
        run_preflight(*prepared("[dlt_ops.rules]\nstale_source = true\n"))


def test_destination_not_resolvable(prepared) -> None:
    from dlt_ops.validate.preflight import run_preflight

    config, registry, info, source = prepared()
    import dataclasses

    config = dataclasses.replace(config, default_destination="nosuchdest")
    with pytest.raises(errors.DestinationNotResolvableError):
        run_preflight(config, registry, info, source)


def test_capability_refusal_lists_features_and_fix(prepared) -> None:
    import dataclasses

    from dlt_ops.validate.preflight import run_preflight

    config, registry, info, source = prepared()
    core = dataclasses.replace(config, default_destination="filesystem")
    report = run_preflight(core, registry, info, source)  # core tier alone is fine
    assert report.tier == "core" and "core mode" in report.notices[0]
    with pytest.raises(errors.DestinationCapabilityError) as exc:
        run_preflight(core, registry, info, source, engaged_features={"backfill"})
    message = str(exc.value)
    for feature in ("runs ledger and status", "checkpoints", "backfill", "clean (remote)",
                    "reconcile", "assertion quarantine"):  # fmt: skip
        assert feature in message
    assert "Fix:" in message and exc.value.engaged == ("backfill",)


def test_incomplete_adapter(prepared, plugin_registry) -> None:
    import types

    from dlt_ops import hookimpl
    from dlt_ops.builtin import secrets_toml
    from dlt_ops.builtin import validation_rules as builtin
    from dlt_ops.validate.preflight import run_preflight

    mod = types.ModuleType("half_adapter")

    class Half:
        name = "duckdb"

        def connect(self, target): ...

    mod.dlt_ops_register_destinations = hookimpl(lambda register: register(Half(), name="duckdb"))
    mod.dlt_ops_register_destinations.__name__ = "dlt_ops_register_destinations"
    registry = plugin_registry(("destination", "duckdb", mod),
                               ("validation_rule", "core_rules", builtin),
                               ("secret_backend", "secrets_toml", secrets_toml))  # fmt: skip
    with pytest.raises(errors.AdapterCapabilityError, match="missing required member"):
        run_preflight(*prepared(registry=registry))


def test_secret_backend_is_checked(prepared, plugin_registry) -> None:
    from dlt_ops.builtin import validation_rules as builtin
    from dlt_ops.validate.preflight import run_preflight

    no_backend = plugin_registry(("validation_rule", "core_rules", builtin))
    config, _, info, source = prepared()
    with pytest.raises(errors.PluginNotRegisteredError, match="secrets_toml"):
        run_preflight(config, no_backend, info, source)
    import dataclasses

    config, registry, info, source = prepared()
    claimed = dataclasses.replace(config.source("alpha"), airflow_var="ALPHA_KEY")
    with pytest.raises(errors.SecretBackendError, match="airflow_var"):
        run_preflight(dataclasses.replace(config, sources={"alpha": claimed}), registry, info,
                      source)  # fmt: skip


def test_alert_sinks_and_assertion_types(prepared) -> None:
    from dlt_ops.validate.preflight import run_preflight

    with pytest.raises(errors.PluginNotRegisteredError, match="pagerduty"):
        run_preflight(*prepared('alert_sinks = ["pagerduty"]\n'))
    config, registry, info, source = prepared()
    import dataclasses

    cfg = dataclasses.replace(config.source("alpha"), assertions={"rows": {"no_such_check": 1}})
    with pytest.raises(errors.PluginNotRegisteredError, match="no_such_check"):
        run_preflight(dataclasses.replace(config, sources={"alpha": cfg}), registry, info, source)


def test_window_needs_incremental_cursor(prepared, h) -> None:
    from dlt_ops.validate.preflight import run_preflight

    with pytest.raises(errors.MissingIncrementalCursorError, match="rows"):
        run_preflight(*prepared(), window=True)
    src = h.good_source("alpha").replace(
        "def rows():", 'def rows(ts=dlt.sources.incremental("id", initial_value=0)):'
    )
    run_preflight(*prepared(src=src), window=True)


def test_preflight_errors_are_one_family() -> None:
    for cls in (errors.UnknownRuleIdError, errors.DestinationCapabilityError,
                errors.MissingIncrementalCursorError, errors.PluginNotRegisteredError,
                errors.SecretBackendError, errors.AdapterCapabilityError):  # fmt: skip
        assert issubclass(cls, errors.PreflightError) and cls.exit_code == 1
