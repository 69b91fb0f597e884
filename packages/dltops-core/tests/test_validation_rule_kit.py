"""Built-in validation rules against the validation-rule conformance kit."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlt_ops.testing import ValidationRuleSuite, validation_context, write_project
from dlt_ops.validate.framework import ValidationRule

SOURCE = """
import dlt


@dlt.resource(name="rows")
def rows():
    yield {"id": 1}


@dlt.source(name="feed")
def feed_source():
    return rows
"""


def _core_rule(rule_id: str) -> ValidationRule:
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.validate.framework import VALIDATION_RULE

    return PluginRegistry().get(VALIDATION_RULE, rule_id)  # through its entry point


class TestScheduleRequired(ValidationRuleSuite):
    __test__ = True

    @pytest.fixture
    def rule(self) -> ValidationRule:
        return _core_rule("schedule_required")

    @pytest.fixture
    def clean_project(self, tmp_path: Path) -> Path:
        return write_project(tmp_path / "ok", {"p/source/feed.py": SOURCE},
                             '[sources.feed.dlt_ops]\nschedule = "@daily"\n')  # fmt: skip

    @pytest.fixture
    def flagged_project(self, tmp_path: Path) -> Path:
        return write_project(tmp_path / "bad", {"p/source/feed.py": SOURCE},
                             '[sources.feed.dlt_ops]\nschedule = "@yearly"\n')  # fmt: skip


class TestExplicitSourceName(TestScheduleRequired):
    @pytest.fixture
    def rule(self) -> ValidationRule:
        return _core_rule("explicit_source_name")

    @pytest.fixture
    def flagged_project(self, tmp_path: Path) -> Path:
        unnamed = SOURCE.replace('@dlt.source(name="feed")', "@dlt.source")
        return write_project(tmp_path / "bad", {"p/source/feed.py": unnamed},
                             '[sources.feed.dlt_ops]\nschedule = "@daily"\n')  # fmt: skip


def test_a_context_for_a_test_project_is_what_rules_read(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {"p/source/feed.py": SOURCE},
                         '[sources.feed.dlt_ops]\nschedule = "@daily"\n')  # fmt: skip
    ctx = validation_context(root)
    assert [s.name for s in ctx.sources()] == ["feed"]
    assert ctx.config.source("feed").schedule == "@daily"
    assert ctx.live() == []  # Phase 2 only on request
    live = validation_context(root, introspect=True).live()
    assert [i.info.name for i in live] == ["feed"]
