"""The acme rule against dlt-ops' validation-rule kit."""

from __future__ import annotations

import pytest

from dlt_ops.testing import ValidationRuleSuite, write_project
from dltops_acme.rules import AcmeModuleDocstring

SOURCE = """
import dlt


@dlt.resource(name="rows")
def rows():
    yield {"id": 1}


@dlt.source(name="feed")
def feed_source():
    return rows
"""
CONFIG = '[sources.feed.dlt_ops]\nschedule = "@daily"\n'


class TestAcmeModuleDocstring(ValidationRuleSuite):
    __test__ = True

    @pytest.fixture
    def rule(self):
        return AcmeModuleDocstring()

    @pytest.fixture
    def clean_project(self, tmp_path):
        text = '"""Rows from the feed API."""\n' + SOURCE
        return write_project(tmp_path / "ok", {"p/source/feed.py": text}, CONFIG)

    @pytest.fixture
    def flagged_project(self, tmp_path):
        return write_project(tmp_path / "bad", {"p/source/feed.py": SOURCE}, CONFIG)
