"""The validation-rule conformance kit, and a way to build a ``ValidationContext`` in a test.

Subclass :class:`ValidationRuleSuite` in your plugin's tests and describe two projects::

    class TestOwnerRule(ValidationRuleSuite):
        __test__ = True

        @pytest.fixture
        def rule(self):
            return OWNER_RULE  # what your plugin registers

        @pytest.fixture
        def clean_project(self, tmp_path):
            return write_project(tmp_path / "ok", {"p/source/feed.py": SOURCE},
                                 '[sources.feed.dlt_ops]\\nowner = "data"\\n')

        @pytest.fixture
        def flagged_project(self, tmp_path):
            return write_project(tmp_path / "bad", {"p/source/feed.py": SOURCE})

Outside the kit, :func:`validation_context` builds the context ``rule.check`` receives for any
project root: ``findings = list(rule.check(validation_context(root)))``.
"""

from __future__ import annotations

import abc
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from dlt_ops.testing._inline import inline_registry
from dlt_ops.validate.framework import Finding, ValidationContext, ValidationRule

if TYPE_CHECKING:
    from dlt_ops.plugins import PluginRegistry

#: The ``[dlt_ops]`` table :func:`write_project` starts every config with.
BASE_CONFIG = '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "raw"\n'


def write_project(
    root: Path, files: dict[str, str], config: str = "", *, base: str = BASE_CONFIG
) -> Path:
    """A project at ``root``: ``.dlt/config.toml`` (``base``, by default :data:`BASE_CONFIG`,
    then ``config``) and ``files`` (relative path -> text, dedented). Sources live in
    ``<pipeline>/source/<x>.py``."""
    for rel, text in {".dlt/config.toml": base + textwrap.dedent(config), **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def validation_context(
    root: Path, *, registry: PluginRegistry | None = None, introspect: bool = False
) -> ValidationContext:
    """The context ``pipeline validate`` hands its rules for the project at ``root``.

    ``registry`` defaults to the installed plugins with the project's picks. With
    ``introspect``, Phase 2 runs too (sources are imported and instantiated in a sandbox),
    which a rule with ``needs_import = True`` reads through ``ctx.live()``.
    """
    from dlt_ops.config import load_project_config
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.project import discover

    config = load_project_config(root)
    project = discover(root)
    if registry is None:
        registry = PluginRegistry(picks=config.plugins)
    introspected: dict[str, Any] = {}
    if introspect and project.sources:
        from dlt_ops.project.introspect import introspect as run_phase_two

        introspected = dict(run_phase_two(project, config, use_cache=False))
    return ValidationContext(config, project, registry, introspected)


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".dlt-ops" not in p.parts and "__pycache__" not in p.parts
    }


class ValidationRuleSuite(abc.ABC):
    """The validation-rule contract as tests. Subclass, set ``__test__ = True``, give a rule, a
    project it passes and a project it flags."""

    __test__ = False

    @abc.abstractmethod
    @pytest.fixture
    def rule(self) -> ValidationRule:
        """What the plugin registers (``register(rule, name=rule.id)``)."""

    @abc.abstractmethod
    @pytest.fixture
    def clean_project(self, tmp_path: Path) -> Path:
        """The root of a project the rule finds nothing in."""

    @abc.abstractmethod
    @pytest.fixture
    def flagged_project(self, tmp_path: Path) -> Path:
        """The root of a project the rule reports at least one finding for."""

    def _check(self, rule: ValidationRule, root: Path) -> list[Finding]:
        ctx = validation_context(root, introspect=bool(getattr(rule, "needs_import", False)))
        return list(rule.check(ctx))

    def _validate(self, rule: ValidationRule, root: Path) -> list[Finding]:
        """The rule's findings as ``pipeline validate`` reports them (switches, exemptions)."""
        from dlt_ops.config import load_project_config
        from dlt_ops.project import discover
        from dlt_ops.validate.engine import validate_project

        registry = inline_registry("validation_rule", rule, rule.id)
        config = load_project_config(root)
        report = validate_project(config, registry, discover(root))
        return [f for f in report.findings if f.rule == rule.id]

    # -- shape --------------------------------------------------------------------------------

    def test_satisfies_the_protocol(self, rule: ValidationRule) -> None:
        assert isinstance(rule, ValidationRule)
        assert isinstance(rule.id, str) and rule.id and rule.id.replace("_", "a").isalnum(), (
            f"a rule id is what users write under [dlt_ops.rules]: {rule.id!r}"
        )
        assert isinstance(rule.description, str) and rule.description.strip()
        assert "\n" not in rule.description.strip(), "the description is one line"
        assert isinstance(rule.default_on, bool)

    def test_registers_under_its_id(self, rule: ValidationRule) -> None:
        from dlt_ops.validate.framework import VALIDATION_RULE

        registry = inline_registry("validation_rule", rule, rule.id)
        assert registry.get(VALIDATION_RULE, rule.id) is rule

    # -- verdicts -----------------------------------------------------------------------------

    def test_the_clean_project_has_no_finding(
        self, rule: ValidationRule, clean_project: Path
    ) -> None:
        assert self._check(rule, clean_project) == []

    def test_the_flagged_project_has_findings(
        self, rule: ValidationRule, flagged_project: Path
    ) -> None:
        findings = self._check(rule, flagged_project)
        assert findings, f"rule '{rule.id}' found nothing in the flagged project"
        for f in findings:
            assert isinstance(f, Finding), f
            assert all(isinstance(v, str) and v for v in (f.source, f.field, f.message)), f

    def test_check_is_repeatable_and_reads_only(
        self, rule: ValidationRule, flagged_project: Path
    ) -> None:
        # validate and the run's preflight both call check; neither may change the project
        before = _snapshot(flagged_project)
        first = self._check(rule, flagged_project)
        assert self._check(rule, flagged_project) == first
        assert _snapshot(flagged_project) == before, "check wrote into the project"

    def test_validate_reports_the_findings_under_the_rule_id(
        self, rule: ValidationRule, flagged_project: Path, clean_project: Path
    ) -> None:
        if not rule.default_on:
            pytest.skip("off by default: validate runs it only when switched on")
        assert self._validate(rule, flagged_project), "validate did not report the rule"
        assert self._validate(rule, clean_project) == []

    def test_switching_the_rule_off_silences_it(
        self, rule: ValidationRule, flagged_project: Path
    ) -> None:
        config = flagged_project / ".dlt" / "config.toml"
        config.write_text(
            config.read_text() + f"\n[dlt_ops.rules]\n{rule.id} = false\n", encoding="utf-8"
        )
        assert self._validate(rule, flagged_project) == []
