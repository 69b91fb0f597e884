"""The acme_script trigger emitter against dlt-ops' trigger-emitter kit."""

from __future__ import annotations

import pytest

from dlt_ops.testing import TriggerEmitterSuite
from dltops_acme_script.emitter import AcmeScriptTarget


class TestAcmeScriptTarget(TriggerEmitterSuite):
    __test__ = True

    @pytest.fixture
    def emitter(self):
        return AcmeScriptTarget()

    @pytest.fixture
    def name(self):
        return "acme_script"
