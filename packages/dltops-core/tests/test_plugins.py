"""The plugin registry: lazy entry points, isolation of broken plugins, conflicts and picks."""

from __future__ import annotations

import sys
import textwrap
import types
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from dlt_ops import hookimpl
from dlt_ops.errors import (
    PluginConflictError,
    PluginLoadError,
    UnknownDestinationError,
    UnknownPluginError,
)
from dlt_ops.plugins import PluginRegistry


def _emitters(*names: str, module_name: str = "inline_emitters") -> types.ModuleType:
    mod = types.ModuleType(module_name)

    @hookimpl
    def dlt_ops_register_trigger_emitters(register):  # noqa: ANN001, ANN202
        for name in names:
            register(f"{module_name}:{name}", name=name)

    mod.dlt_ops_register_trigger_emitters = dlt_ops_register_trigger_emitters
    return mod


def _write_module(tmp_path: Path, name: str, body: str) -> None:
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(body))


def test_inline_plugin_registers(plugin_registry) -> None:  # noqa: ANN001
    registry = plugin_registry(("trigger_emitter", "airflow", _emitters("airflow")))
    assert registry.get("trigger_emitter", "airflow") == "inline_emitters:airflow"
    assert registry.names("trigger_emitter") == ["airflow"]


def test_entry_point_module_is_imported_only_on_lookup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_module(
        tmp_path,
        "lazy_dest_plugin",
        """
        from dlt_ops import hookimpl

        @hookimpl
        def dlt_ops_register_destinations(register):
            register(object, name="lazydb")
        """,
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    ep = EntryPoint("lazydb", "lazy_dest_plugin", "dlt_ops.destination")
    registry = PluginRegistry(entry_points=[ep])
    assert registry.names("destination") == ["lazydb"]
    assert "lazy_dest_plugin" not in sys.modules
    assert registry.get("destination", "lazydb") is object
    assert "lazy_dest_plugin" in sys.modules


def test_unrelated_broken_plugin_never_breaks_a_lookup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_module(tmp_path, "broken_plugin_a", "raise ImportError('missing sdk')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = PluginRegistry(
        entry_points=[EntryPoint("broken", "broken_plugin_a", "dlt_ops.destination")]
    )
    registry.add_plugin(_emitters("cli"), name="cli", kind="trigger_emitter")
    assert registry.get("trigger_emitter", "cli") == "inline_emitters:cli"
    with pytest.raises(PluginLoadError, match="missing sdk"):
        registry.get("destination", "broken")
    assert [f.source.name for f in registry.failures] == ["broken"]


def test_misspelled_hook_is_caught_and_recorded(plugin_registry) -> None:  # noqa: ANN001
    mod = types.ModuleType("typo_plugin")

    @hookimpl
    def dlt_ops_register_destination(register):  # noqa: ANN001, ANN202 - missing "s"
        register(object, name="typo")

    mod.dlt_ops_register_destination = dlt_ops_register_destination
    registry = plugin_registry(("destination", "typo", mod))
    assert registry.failures and "dlt_ops_register_destination" in registry.failures[0].error
    with pytest.raises(PluginLoadError):
        registry.get("destination", "typo")


def test_two_plugins_claiming_a_name_conflict_with_the_toml_fix(plugin_registry) -> None:  # noqa: ANN001
    registry = plugin_registry(
        ("trigger_emitter", "cli", _emitters("cli", module_name="one")),
        ("trigger_emitter", "cli2", _emitters("cli", module_name="two")),
    )
    with pytest.raises(PluginConflictError) as err:
        registry.get("trigger_emitter", "cli")
    assert "[dlt_ops.plugins.trigger_emitter]" in str(err.value)
    assert 'cli = "one"' in str(err.value)
    assert registry.conflicts()[0][:2] == ("trigger_emitter", "cli")


def test_a_pick_resolves_the_conflict(plugin_registry) -> None:  # noqa: ANN001
    registry = plugin_registry(
        ("trigger_emitter", "cli", _emitters("cli", module_name="one")),
        ("trigger_emitter", "cli2", _emitters("cli", module_name="two")),
        picks={"trigger_emitter": {"cli": "two"}},
    )
    assert registry.get("trigger_emitter", "cli") == "two:cli"
    assert registry.conflicts() == []


def test_one_module_behind_two_entry_points_is_one_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_module(
        tmp_path,
        "twin_emitters",
        """
        from dlt_ops import hookimpl

        @hookimpl
        def dlt_ops_register_trigger_emitters(register):
            register("a", name="a")
            register("b", name="b")
        """,
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    eps = [
        EntryPoint("a", "twin_emitters", "dlt_ops.trigger_emitter"),
        EntryPoint("b", "twin_emitters", "dlt_ops.trigger_emitter"),
    ]
    registry = PluginRegistry(entry_points=eps)
    registry.load_all()
    assert registry.get("trigger_emitter", "a") == "a"
    assert registry.get("trigger_emitter", "b") == "b"
    assert registry.conflicts() == []


def test_a_name_registered_under_another_entry_point_is_found(plugin_registry) -> None:  # noqa: ANN001
    registry = plugin_registry(("trigger_emitter", "pack", _emitters("x", "y")))
    assert registry.get("trigger_emitter", "y") == "inline_emitters:y"


def test_unknown_names_list_what_is_registered(plugin_registry) -> None:  # noqa: ANN001
    registry = plugin_registry(("trigger_emitter", "cli", _emitters("cli")))
    with pytest.raises(UnknownPluginError, match="registered: cli"):
        registry.get("trigger_emitter", "cron")
    with pytest.raises(UnknownDestinationError, match="no registered DestinationAdapter"):
        registry.get("destination", "snowflake")


def test_unknown_kind_group_is_reported() -> None:
    ep = EntryPoint("x", "somewhere", "dlt_ops.destinations")
    registry = PluginRegistry(entry_points=[ep])
    assert [s.kind for s in registry.unknown_kinds] == ["destinations"]


def test_installed_builtins_load_from_entry_points() -> None:
    registry = PluginRegistry()
    assert "duckdb" in registry.names("destination")
    assert registry.get("trigger_emitter", "cli").name == "cli"
