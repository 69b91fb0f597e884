"""The plugin registry: lazy entry points, isolation of broken plugins, conflicts and picks."""

from __future__ import annotations

import sys
import textwrap
import types
from dataclasses import dataclass
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
from dlt_ops.plugin_api import TRIGGER_EMITTER
from dlt_ops.plugins import PluginRegistry


@dataclass(frozen=True)
class Emitter:
    description: str


def _emitters(*names: str, module_name: str = "inline_emitters") -> types.ModuleType:
    mod = types.ModuleType(module_name)

    @hookimpl
    def dlt_ops_register_trigger_emitters(register):  # noqa: ANN001, ANN202
        for name in names:
            register(Emitter(f"{module_name}:{name}"), name=name)

    mod.dlt_ops_register_trigger_emitters = dlt_ops_register_trigger_emitters
    return mod


def _write_module(tmp_path: Path, name: str, body: str) -> None:
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(body))


def test_inline_plugin_registers(plugin_registry) -> None:  # noqa: ANN001
    registry = plugin_registry(("trigger_emitter", "airflow", _emitters("airflow")))
    assert registry.get("trigger_emitter", "airflow").description == "inline_emitters:airflow"
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
    assert registry.get("trigger_emitter", "cli").description == "inline_emitters:cli"
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
    assert registry.get("trigger_emitter", "cli").description == "two:cli"
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
            from dlt_ops.builtin.triggers import TriggerEmitter

            register(TriggerEmitter("a", "first"), name="a")
            register(TriggerEmitter("b", "second"), name="b")
        """,
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    eps = [
        EntryPoint("a", "twin_emitters", "dlt_ops.trigger_emitter"),
        EntryPoint("b", "twin_emitters", "dlt_ops.trigger_emitter"),
    ]
    registry = PluginRegistry(entry_points=eps)
    registry.load_all()
    assert registry.get(TRIGGER_EMITTER, "a").description == "first"
    assert registry.get(TRIGGER_EMITTER, "b").description == "second"
    assert registry.conflicts() == []
    # each entry point accounts for its own name, not its sibling's
    assert [registry.registered_by(s) for s in registry.sources()] == [["a"], ["b"]]


def test_a_name_registered_under_another_entry_point_is_found(plugin_registry) -> None:  # noqa: ANN001
    registry = plugin_registry(("trigger_emitter", "pack", _emitters("x", "y")))
    assert registry.get("trigger_emitter", "y").description == "inline_emitters:y"


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


def test_a_typed_kind_returns_the_registered_object(plugin_registry) -> None:  # noqa: ANN001
    registry = plugin_registry(("trigger_emitter", "cron", _emitters("cron")))
    emitter = registry.get(TRIGGER_EMITTER, "cron")
    assert emitter.description == "inline_emitters:cron"


def test_failed_plugins_are_not_offered_as_registered_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_module(tmp_path, "broken_emitters", "raise ImportError('no sdk')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = PluginRegistry(
        entry_points=[EntryPoint("airflow", "broken_emitters", "dlt_ops.trigger_emitter")]
    )
    registry.add_plugin(_emitters("cli"), name="cli", kind="trigger_emitter")
    with pytest.raises(UnknownPluginError) as err:
        registry.get("trigger_emitter", "cron")
    assert "registered: cli" in str(err.value) and "airflow" not in str(err.value)


def test_a_registration_of_the_wrong_shape_is_refused_and_the_rest_stand(plugin_registry) -> None:  # noqa: ANN001
    mod = types.ModuleType("half_emitters")

    @hookimpl
    def dlt_ops_register_trigger_emitters(register):  # noqa: ANN001, ANN202
        register("not an emitter", name="bad")
        register(Emitter("fine"), name="good")

    mod.dlt_ops_register_trigger_emitters = dlt_ops_register_trigger_emitters
    registry = plugin_registry(("trigger_emitter", "good", mod))
    assert registry.get("trigger_emitter", "good").description == "fine"
    with pytest.raises(PluginLoadError, match="lacks: description"):
        registry.get("trigger_emitter", "bad")
    assert [(r.name, r.kind) for r in registry.rejected] == [("bad", "trigger_emitter")]
    assert registry.names("trigger_emitter") == ["good"]


def test_a_plugin_lists_the_names_it_registered_not_its_entry_point(plugin_registry) -> None:  # noqa: ANN001
    registry = plugin_registry(("trigger_emitter", "pack", _emitters("x", "y")))
    registry.load_all()
    (source,) = registry.sources("trigger_emitter")
    assert registry.registered_by(source) == ["x", "y"]
    assert registry.names("trigger_emitter") == ["x", "y"]


def test_hook_problems_flag_unmarked_hooks_and_plugins_without_hooks(plugin_registry) -> None:  # noqa: ANN001
    typo = types.ModuleType("undecorated_typo")

    def dlt_ops_register_trigger_emitter(register):  # noqa: ANN001, ANN202 - no "s", no marker
        register(Emitter("never"), name="never")

    typo.dlt_ops_register_trigger_emitter = dlt_ops_register_trigger_emitter
    plain = types.ModuleType("undecorated_right_name")

    def dlt_ops_register_trigger_emitters(register):  # noqa: ANN001, ANN202 - no marker
        register(Emitter("never"), name="never")

    plain.dlt_ops_register_trigger_emitters = dlt_ops_register_trigger_emitters
    registry = plugin_registry(
        ("trigger_emitter", "typo", typo),
        ("trigger_emitter", "plain", plain),
        ("trigger_emitter", "cli", _emitters("cli")),
    )
    by_name = {s.name: registry.hook_problems(s) for s in registry.sources()}
    assert by_name["typo"] == [
        "implements no hook",
        "dlt_ops_register_trigger_emitter: matches no hook (misspelled?)",
    ]
    assert by_name["plain"] == [
        "implements no hook",
        "dlt_ops_register_trigger_emitters: not decorated with @hookimpl",
    ]
    assert by_name["cli"] == []


def test_a_lifecycle_plugin_loads_without_a_registration_hook(plugin_registry) -> None:  # noqa: ANN001
    mod = types.ModuleType("observer_plugin")
    seen: list[str] = []

    @hookimpl
    def dlt_ops_run_started(record):  # noqa: ANN001, ANN202
        seen.append(record)

    mod.dlt_ops_run_started = dlt_ops_run_started
    registry = plugin_registry(("lifecycle", "observer", mod))
    assert registry.failures == []
    assert registry.hooks_of(registry.sources("lifecycle")[0]) == ("dlt_ops_run_started",)


def test_the_plugin_package_never_imports_the_hook_specs() -> None:
    # hookspecs names types from every feature: a static import from the manager would close
    # import cycles, so the manager loads the spec module by name (see plugins/kinds.py)
    import ast

    import dlt_ops.plugins

    for path in Path(dlt_ops.plugins.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            assert not any(n.startswith("dlt_ops.hookspecs") for n in names), path.name


def test_the_testing_extra_brings_pytest() -> None:
    # dlt_ops.testing imports pytest: a plugin author installs dltops-core[testing]
    import tomllib

    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    extras = tomllib.loads(pyproject.read_text())["project"]["optional-dependencies"]
    assert any(req.startswith("pytest") for req in extras["testing"])
