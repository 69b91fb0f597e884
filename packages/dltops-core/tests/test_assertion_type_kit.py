"""The four built-in assertion types against the assertion-type conformance kit."""

from __future__ import annotations

from typing import Any

import pytest

from dlt_ops.builtin.assertions import (
    MaxRowsPerLoad,
    MinRowsPerLoad,
    RequiredColumns,
    UniqueColumns,
)
from dlt_ops.testing import AssertionCase, AssertionTypeSuite

ROWS = [{"id": 1, "kind": "a"}, {"id": 2, "kind": "b"}, {"id": 3, "kind": None}]


class TestMinRowsPerLoad(AssertionTypeSuite):
    __test__ = True

    @pytest.fixture
    def assertion_type(self) -> Any:
        return MinRowsPerLoad

    @pytest.fixture
    def valid_params(self) -> Any:
        return [{"value": 0}, {"value": 3}]

    @pytest.fixture
    def invalid_params(self) -> Any:
        return [{"value": -1}, {"value": "3"}, {"value": True}, {}]

    @pytest.fixture
    def cases(self) -> Any:
        return [
            AssertionCase({"value": 3}, ROWS, passes=True),
            AssertionCase({"value": 4}, ROWS, passes=False),
            AssertionCase({"value": 1}, [], passes=False, label="empty batch"),
        ]


class TestMaxRowsPerLoad(AssertionTypeSuite):
    __test__ = True

    @pytest.fixture
    def assertion_type(self) -> Any:
        return MaxRowsPerLoad()  # an instance registers too

    @pytest.fixture
    def valid_params(self) -> Any:
        return [{"value": 1}]

    @pytest.fixture
    def invalid_params(self) -> Any:
        return [{"value": 0}, {"value": 2.5}]

    @pytest.fixture
    def cases(self) -> Any:
        return [
            AssertionCase({"value": 3}, ROWS, passes=True),
            AssertionCase({"value": 2}, ROWS, passes=False),
        ]


class TestRequiredColumns(AssertionTypeSuite):
    __test__ = True

    @pytest.fixture
    def assertion_type(self) -> Any:
        return RequiredColumns

    @pytest.fixture
    def valid_params(self) -> Any:
        return [{"value": ["id"]}, {"value": ["id", "kind"]}]

    @pytest.fixture
    def invalid_params(self) -> Any:
        return [{"value": []}, {"value": "id"}, {"value": [""]}]

    @pytest.fixture
    def cases(self) -> Any:
        return [
            AssertionCase({"value": ["id", "kind"]}, ROWS, True, declared_columns=("id", "kind")),
            AssertionCase({"value": ["id"]}, [{"id": 1}, {"kind": "x"}], passes=False),
        ]


class TestUniqueColumns(AssertionTypeSuite):
    __test__ = True

    @pytest.fixture
    def assertion_type(self) -> Any:
        return UniqueColumns

    @pytest.fixture
    def valid_params(self) -> Any:
        return [{"value": ["id"]}]

    @pytest.fixture
    def invalid_params(self) -> Any:
        return [{"value": [1]}, {"value": None}]

    @pytest.fixture
    def cases(self) -> Any:
        return [
            AssertionCase({"value": ["id"]}, ROWS, passes=True),
            AssertionCase({"value": ["kind"]}, [*ROWS, {"id": 4, "kind": "a"}], passes=False),
        ]


class _LeakyUnique:
    """Wrong on purpose: one set shared by every state, and it mutates rows."""

    name = "leaky_unique"
    row_scoped = True
    seen: set[Any] = set()

    def check_config(self, params: Any, ctx: Any) -> list[str]:
        return []

    def start(self, params: Any) -> set[Any]:
        return self.seen

    def observe(self, state: set[Any], row: Any, params: Any) -> str | None:
        row["_seen"] = True
        key = row.get("id")
        if key in state:
            return f"duplicate {key}"
        state.add(key)
        return None

    def finalize(self, state: Any, params: Any) -> None:
        return None


def test_the_kit_catches_a_shared_state_and_a_mutated_row() -> None:
    kit = TestUniqueColumns()

    def cases() -> list[AssertionCase]:  # fresh rows: the leaky type writes into them
        return [AssertionCase({"value": ["id"]}, [dict(r) for r in ROWS], passes=True)]

    with pytest.raises(AssertionError):
        kit.test_every_start_is_a_fresh_state(_LeakyUnique(), cases())
    with pytest.raises(AssertionError):
        kit.test_observe_never_changes_a_row(_LeakyUnique(), cases())
