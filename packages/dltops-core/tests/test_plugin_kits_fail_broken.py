"""The validation-rule, trigger-emitter, secret-backend and lifecycle kits fail broken plugins
(run once, in a subprocess, on a module of deliberately broken ones)."""

from __future__ import annotations

import subprocess
import sys

import pytest

BROKEN = '''
import types
from pathlib import Path

import pytest

from dlt_ops import hookimpl
from dlt_ops.testing import (
    LifecycleObserverSuite, SecretBackendSuite, TriggerEmitterSuite, ValidationRuleSuite,
    write_project,
)
from dlt_ops.validate.framework import Finding, Rule

SOURCE = """
import dlt

@dlt.resource(name="rows")
def rows():
    yield {"id": 1}

@dlt.source(name="feed")
def feed_source():
    return rows
"""


def _blind(ctx):
    return []


class TestBlindRule(ValidationRuleSuite):
    __test__ = True

    @pytest.fixture
    def rule(self):
        return Rule("kit_blind", "Finds nothing, ever.", _blind)

    @pytest.fixture
    def clean_project(self, tmp_path):
        return write_project(tmp_path / "ok", {"p/source/feed.py": SOURCE})

    @pytest.fixture
    def flagged_project(self, tmp_path):
        return write_project(tmp_path / "bad", {"p/source/feed.py": SOURCE})


class Noisy:
    description = "two\\nlines"
    default_path = "x.txt"

    def render(self, sources, *, root, trigger_source, cli="dlt-ops", packages=()):
        return "\\n".join(f"{cli} pipeline run -s {s.name}" for s in sources)


class TestForgetfulTarget(TriggerEmitterSuite):
    __test__ = True

    @pytest.fixture
    def emitter(self):
        return Noisy()

    @pytest.fixture
    def name(self):
        return "noisy"


class Greedy:
    name = "greedy"

    def claims(self, source):
        return True

    def check(self, config, source):
        return []

    def prepare(self, config, source):
        pass


class TestGreedyBackend(SecretBackendSuite):
    __test__ = True

    @pytest.fixture
    def backend(self):
        return Greedy()


raising = types.ModuleType("kit_raising_observer")


@hookimpl
def dlt_ops_run_finished(run, outcome):
    raise RuntimeError("observer broke")


raising.dlt_ops_run_finished = dlt_ops_run_finished
sloppy = types.ModuleType("kit_sloppy_observer")
sloppy.dlt_ops_run_finished = dlt_ops_run_finished


def dlt_ops_run_started(run):  # undecorated: never called
    pass


sloppy.dlt_ops_run_started = dlt_ops_run_started


class TestRaisingObserver(LifecycleObserverSuite):
    __test__ = True

    @pytest.fixture
    def plugin(self):
        return raising


class TestSloppyObserver(LifecycleObserverSuite):
    __test__ = True

    @pytest.fixture
    def plugin(self):
        return sloppy
'''


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """``{"TestX::test_y": "PASSED" | "FAILED" | "SKIPPED"}`` for the module above."""
    where = tmp_path_factory.mktemp("kits")
    (where / "test_broken_plugins.py").write_text(BROKEN)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-v", "--no-header"],
        cwd=where, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    found = {
        words[0].split("::", 1)[1]: words[1]
        for words in (line.split() for line in result.stdout.splitlines())
        if len(words) > 1 and "::" in words[0] and words[1] in ("PASSED", "FAILED", "SKIPPED")
    }
    assert found, result.stdout[-3000:] + result.stderr[-2000:]
    return found


@pytest.mark.parametrize(
    "test",
    [
        "TestBlindRule::test_the_flagged_project_has_findings",
        "TestBlindRule::test_validate_reports_the_findings_under_the_rule_id",
        "TestForgetfulTarget::test_satisfies_the_protocol",
        "TestForgetfulTarget::test_each_source_runs_under_the_emitters_name",
        "TestForgetfulTarget::test_the_root_reaches_the_command",
        "TestGreedyBackend::test_a_source_that_asks_for_nothing_is_not_claimed",
        "TestRaisingObserver::test_a_completed_run_stays_completed",
        "TestRaisingObserver::test_a_failed_run_stays_failed",
        "TestSloppyObserver::test_loads_with_lifecycle_hooks_only_correctly_spelled",
    ],
)
def test_the_kit_fails_the_broken_plugin(outcomes: dict[str, str], test: str) -> None:
    assert outcomes[test] == "FAILED"


def test_what_the_broken_plugins_do_right_still_passes(outcomes: dict[str, str]) -> None:
    assert outcomes["TestBlindRule::test_the_clean_project_has_no_finding"] == "PASSED"
    assert outcomes["TestGreedyBackend::test_satisfies_the_protocol"] == "PASSED"
    assert outcomes["TestForgetfulTarget::test_rendering_is_deterministic"] == "PASSED"
