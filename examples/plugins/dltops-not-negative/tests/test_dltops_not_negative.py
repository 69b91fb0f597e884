"""The not_negative assertion type against dlt-ops' assertion-type kit."""

from __future__ import annotations

import pytest

from dlt_ops.testing import AssertionCase, AssertionTypeSuite
from dltops_not_negative.assertion import NotNegative


class TestNotNegative(AssertionTypeSuite):
    __test__ = True

    @pytest.fixture
    def assertion_type(self):
        return NotNegative

    @pytest.fixture
    def valid_params(self):
        return [{"value": ["amount"]}]

    @pytest.fixture
    def invalid_params(self):
        return [{"value": []}, {"value": "amount"}]

    @pytest.fixture
    def cases(self):
        return [
            AssertionCase({"value": ["amount"]}, [{"amount": 1}, {"amount": 0}], passes=True),
            AssertionCase({"value": ["amount"]}, [{"amount": 1}, {"amount": -2}], passes=False),
        ]
