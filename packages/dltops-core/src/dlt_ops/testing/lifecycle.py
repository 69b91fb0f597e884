"""The lifecycle-observer conformance kit.

Subclass :class:`LifecycleObserverSuite` in your plugin's tests::

    class TestRunTimer(LifecycleObserverSuite):
        __test__ = True

        @pytest.fixture
        def plugin(self):
            import acme_dltops.timer
            return acme_dltops.timer  # the module your dlt_ops.lifecycle entry point names

        @pytest.fixture
        def observed(self, tmp_path):
            return lambda: read_run_ids(tmp_path)  # run ids the observer saw finish

The kit runs real runs in a throwaway project on dlt's ``filesystem`` destination (core tier:
nothing beyond dltops-core is needed), with every other installed plugin loaded and yours
added: one run that completes and one whose source raises. Your plugin must load cleanly (no
misspelled or undecorated hook), keep both runs' outcomes as they are (an observer that raises
is logged and isolated, but a raising observer is a broken one: the kit fails it), and, when
``observed`` is given, have seen both. ``project_config`` adds config the plugin reads.
"""

from __future__ import annotations

import abc
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dlt_ops.testing.validation_rules import write_project

#: The hooks a lifecycle plugin may implement.
LIFECYCLE_HOOKS = (
    "dlt_ops_prepare_run",
    "dlt_ops_extract_gates",
    "dlt_ops_run_started",
    "dlt_ops_run_finished",
)
OK_SOURCE = """
import dlt


@dlt.resource(name="rows")
def rows():
    yield [{"id": 1}, {"id": 2}, {"id": 3}]


@dlt.source(name="kit_ok")
def kit_ok_source():
    return rows
"""
RAISING_SOURCE = """
import dlt


@dlt.resource(name="rows")
def rows():
    raise RuntimeError("kit source failed on purpose")
    yield


@dlt.source(name="kit_failing")
def kit_failing_source():
    return rows
"""
#: Lists the run ids an observer saw finish.
Observed = Callable[[], list[str]]


class LifecycleObserverSuite(abc.ABC):
    """The lifecycle-observer contract as tests. Subclass, set ``__test__ = True``, give the
    plugin module."""

    __test__ = False

    @abc.abstractmethod
    @pytest.fixture
    def plugin(self) -> types.ModuleType:
        """The module of ``@hookimpl`` lifecycle hooks (what the entry point names)."""

    @pytest.fixture
    def observed(self) -> Observed | None:
        """Lists the run ids the observer saw finish (``None``: not checked)."""
        return None

    @pytest.fixture
    def project_config(self) -> str:
        """Config text appended to the kit project's ``.dlt/config.toml``."""
        return ""

    @pytest.fixture
    def kit_project(self, tmp_path: Path, project_config: str) -> Path:
        """A project with ``kit_ok`` and ``kit_failing`` on a local filesystem destination."""
        lake = tmp_path / "lake"
        config = (
            '[dlt_ops]\ndefault_destination = "filesystem"\ndefault_dataset = "kit"\n'
            'ledger_sinks = ["jsonl"]\nalert_sinks = []\n'
            f'[destination.filesystem]\nbucket_url = "{lake.as_uri()}"\n'
            '[sources.kit_ok.dlt_ops]\nschedule = "@daily"\n'
            '[sources.kit_failing.dlt_ops]\nschedule = "@daily"\n'
        )
        return write_project(
            tmp_path / "kit_project",
            {"p/source/kit_ok.py": OK_SOURCE, "p/source/kit_failing.py": RAISING_SOURCE},
            config + project_config,
            base="",
        )

    @pytest.fixture
    def registry(self, plugin: types.ModuleType) -> Any:
        """Every installed plugin but ``plugin``'s own entry points, plus ``plugin``."""
        from dlt_ops.plugins import PluginRegistry
        from dlt_ops.plugins.manager import installed_entry_points

        name = plugin.__name__
        others = [ep for ep in installed_entry_points() if ep.value != name]
        registry = PluginRegistry(entry_points=others)
        registry.add_plugin(plugin, name=name.rpartition(".")[2], kind="lifecycle")
        return registry

    def _run(
        self,
        plugin: types.ModuleType,
        registry: Any,
        root: Path,
        source: str,
        observed: Observed | None,
    ) -> Any:
        """Run ``source``; fail when the plugin raised in an observer or missed the run."""
        from structlog.testing import capture_logs

        from dlt_ops.config import load_project_config
        from dlt_ops.runner.model import RunRequest
        from dlt_ops.runner.run import execute_run

        with capture_logs() as logs:
            outcome = execute_run(registry, load_project_config(root), RunRequest(source))
        failures = [
            e
            for e in logs
            if e.get("event") == "run.observer_failed" and plugin.__name__ in str(e.get("plugin"))
        ]
        assert failures == [], f"the observer raised: {failures}"
        assert all(isinstance(r, str) for r in outcome.reports)
        if observed is not None:
            assert outcome.record.run_id in observed(), "the observer did not see the run"
        return outcome

    # -- loading ------------------------------------------------------------------------------

    def test_loads_with_lifecycle_hooks_only_correctly_spelled(
        self, plugin: types.ModuleType, registry: Any
    ) -> None:
        (source,) = [s for s in registry.sources("lifecycle") if s.value == plugin.__name__]
        assert not registry.failures, [f.error for f in registry.failures]
        hooks = registry.hooks_of(source)
        assert set(hooks) & set(LIFECYCLE_HOOKS), f"implements no lifecycle hook: {hooks}"
        assert registry.hook_problems(source) == []

    # -- runs ---------------------------------------------------------------------------------

    def test_a_completed_run_stays_completed(
        self,
        plugin: types.ModuleType,
        registry: Any,
        kit_project: Path,
        observed: Observed | None,
    ) -> None:
        outcome = self._run(plugin, registry, kit_project, "kit_ok", observed)
        assert outcome.ok, outcome.error
        assert outcome.record.status == "completed" and outcome.record.records_loaded == 3

    def test_a_failed_run_stays_failed(
        self,
        plugin: types.ModuleType,
        registry: Any,
        kit_project: Path,
        observed: Observed | None,
    ) -> None:
        outcome = self._run(plugin, registry, kit_project, "kit_failing", observed)
        assert not outcome.ok and outcome.record.status == "failed"
        assert "kit source failed on purpose" in str(outcome.record.error_summary)

    def test_preparing_a_plain_run_is_not_refused(self, registry: Any, kit_project: Path) -> None:
        # dlt_ops_prepare_run may refuse a run; a plugin must not refuse one it has no
        # business with (the kit project configures nothing for it)
        from dlt_ops.config import load_project_config
        from dlt_ops.runner.prepare import prepare_run

        prepared = prepare_run(registry, load_project_config(kit_project), "kit_ok")
        assert prepared.source == "kit_ok"
