"""Turning plugins off (``[dlt_ops.plugins] disable``, ``DLT_OPS_DISABLE_PLUGINS``) and the
fail-closed check over the plugins every run loads."""

from __future__ import annotations

import sys
import textwrap
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from dlt_ops.config import load_project_config
from dlt_ops.errors import ConfigError, PluginDisabledError, RunPluginLoadError
from dlt_ops.plugins import PluginRegistry
from dlt_ops.plugins.run_kinds import require_run_plugins, run_plugin_problems

EMITTER = """
from dataclasses import dataclass
from dlt_ops import hookimpl

@dataclass(frozen=True)
class Emitter:
    description: str

@hookimpl
def dlt_ops_register_trigger_emitters(register):
    register(Emitter("from {name}"), name="{name}")

@hookimpl
def dlt_ops_register_secret_backends(register):
    pass
"""


GUARD_OK = """
from dlt_ops import hookimpl

@hookimpl
def dlt_ops_prepare_run(prepared):
    pass
"""


def _module(path: Path, name: str, body: str) -> None:
    (path / f"{name}.py").write_text(textwrap.dedent(body).replace("{name}", name))


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("DLT_OPS_DISABLE_PLUGINS", raising=False)
    return tmp_path


def test_a_disabled_plugin_is_never_imported_and_its_lookup_says_so(site: Path) -> None:
    _module(site, "off_emitter_mod", "raise ImportError('would break if imported')\n")
    _module(site, "on_emitter_mod", EMITTER)
    eps = [
        EntryPoint("off", "off_emitter_mod", "dlt_ops.trigger_emitter"),
        EntryPoint("on_emitter_mod", "on_emitter_mod", "dlt_ops.trigger_emitter"),
    ]
    registry = PluginRegistry(entry_points=eps, disable=["off"])
    registry.load_all()
    assert "off_emitter_mod" not in sys.modules
    assert registry.failures == []
    assert registry.names("trigger_emitter") == ["on_emitter_mod"]
    assert registry.has("trigger_emitter", "off")  # installed: not mistaken for absent
    with pytest.raises(PluginDisabledError, match=r"disabled by \[dlt_ops.plugins\] disable"):
        registry.get("trigger_emitter", "off")
    assert registry.get("trigger_emitter", "on_emitter_mod").description == "from on_emitter_mod"


def test_kind_colon_name_disables_one_kind_only(site: Path) -> None:
    _module(site, "twin_mod", EMITTER.replace('"{name}"', '"twin"'))
    eps = [
        EntryPoint("twin", "twin_mod", "dlt_ops.trigger_emitter"),
        EntryPoint("twin", "twin_mod", "dlt_ops.secret_backend"),
    ]
    registry = PluginRegistry(entry_points=eps, disable=["secret_backend:twin"])
    (emitter, backend) = registry.sources()
    assert registry.disabled_by(backend) == "[dlt_ops.plugins] disable"
    assert registry.disabled_by(emitter) is None
    assert registry.get("trigger_emitter", "twin").description == "from twin_mod"
    both = PluginRegistry(entry_points=eps, disable=["twin"])
    assert all(both.disabled_by(s) for s in both.sources())


def test_the_environment_adds_to_every_registry_of_the_process(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _module(site, "env_emitter_mod", EMITTER)
    eps = [EntryPoint("env_emitter_mod", "env_emitter_mod", "dlt_ops.trigger_emitter")]
    monkeypatch.setenv("DLT_OPS_DISABLE_PLUGINS", " env_emitter_mod , ,nothing_here")
    registry = PluginRegistry(entry_points=eps)
    with pytest.raises(PluginDisabledError, match="DLT_OPS_DISABLE_PLUGINS"):
        registry.get("trigger_emitter", "env_emitter_mod")
    assert [str(d) for d in registry.unmatched_disables()] == ["nothing_here"]
    monkeypatch.setenv("DLT_OPS_DISABLE_PLUGINS", "storage:x")
    with pytest.raises(ConfigError, match="DLT_OPS_DISABLE_PLUGINS: 'storage:x': unknown plugin"):
        PluginRegistry(entry_points=eps)


def test_a_lifecycle_plugin_that_cannot_be_used_fails_the_run_check(site: Path) -> None:
    _module(site, "guard_broken", "import no_such_guard_sdk\n")
    _module(site, "guard_typo", "def dlt_ops_run_finishd(run, outcome):\n    pass\n")
    _module(site, "guard_ok", GUARD_OK)
    eps = [
        EntryPoint("broken", "guard_broken", "dlt_ops.lifecycle"),
        EntryPoint("typo", "guard_typo", "dlt_ops.lifecycle"),
        EntryPoint("fine", "guard_ok", "dlt_ops.lifecycle"),
    ]
    problems = run_plugin_problems(PluginRegistry(entry_points=eps))
    assert {p.source.name: p.error for p in problems} == {
        "broken": "ModuleNotFoundError: No module named 'no_such_guard_sdk'",
        "typo": "dlt_ops_run_finishd: matches no hook (misspelled?)",
    }
    with pytest.raises(RunPluginLoadError) as err:
        require_run_plugins(PluginRegistry(entry_points=eps))
    assert "lifecycle plugin 'broken'" in str(err.value) and "'typo'" in str(err.value)
    assert err.value.exit_code == 2
    require_run_plugins(PluginRegistry(entry_points=eps, disable=["broken", "lifecycle:typo"]))


def _config(tmp_path: Path, plugins: str) -> Path:
    (tmp_path / ".dlt").mkdir(exist_ok=True)
    (tmp_path / ".dlt" / "config.toml").write_text(f"[dlt_ops]\n[dlt_ops.plugins]\n{plugins}")
    return tmp_path


def test_config_disable_sits_beside_the_pick_tables(tmp_path: Path) -> None:
    root = _config(
        tmp_path,
        'disable = ["freeze", "secret_backend:airflow"]\n'
        '[dlt_ops.plugins.destination]\nduckdb = "dltops-duckdb"\n',
    )
    config = load_project_config(root)
    assert config.disabled_plugins == ("freeze", "secret_backend:airflow")
    assert config.plugins == {"destination": {"duckdb": "dltops-duckdb"}}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('"freeze"', r"\[dlt_ops.plugins\] disable must be a list of plugin names"),
        ("[1]", r"\[dlt_ops.plugins\] disable must be a list of plugin names"),
        ('["storage:x"]', "unknown plugin kind 'storage'"),
        ('[""]', "is not a plugin name"),
    ],
)
def test_config_disable_is_validated(tmp_path: Path, value: str, message: str) -> None:
    root = _config(tmp_path, f"disable = {value}\n")
    with pytest.raises(ConfigError, match=message) as err:
        load_project_config(root)
    assert err.value.exit_code == 2
