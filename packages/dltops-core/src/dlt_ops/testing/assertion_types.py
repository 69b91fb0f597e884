"""The assertion-type conformance kit.

Subclass :class:`AssertionTypeSuite` in your plugin's tests and describe your type with data::

    class TestNotNegative(AssertionTypeSuite):
        __test__ = True

        @pytest.fixture
        def assertion_type(self):
            return NotNegative  # what your plugin registers: the class or an instance

        @pytest.fixture
        def valid_params(self):
            return [{"value": ["amount"]}]

        @pytest.fixture
        def invalid_params(self):
            return [{"value": []}, {"value": "amount"}]

        @pytest.fixture
        def cases(self):
            return [
                AssertionCase({"value": ["amount"]}, [{"amount": 1}], passes=True),
                AssertionCase({"value": ["amount"]}, [{"amount": -1}], passes=False),
            ]

``params`` are what the engine hands a type: the TOML value with a scalar/array shorthand
normalized to ``{"value": x}`` and the policy keys removed. A case *fails* when any ``observe``
returns a message (a row-scoped type) or ``finalize`` does (a batch type).
"""

from __future__ import annotations

import abc
import copy
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from dlt_ops.assertions.model import RESERVED_KEYS, AssertionContext, AssertionType

CONTEXT = AssertionContext("kit_source", "kit_resource")


@dataclass(frozen=True)
class AssertionCase:
    """``rows`` run through one fresh state under ``params``; ``passes`` is the verdict."""

    params: Mapping[str, Any]
    rows: Sequence[Mapping[str, Any]]
    passes: bool
    #: The resource model's field names, when the case needs them for ``check_config``.
    declared_columns: tuple[str, ...] | None = None
    label: str = field(default="", compare=False)


@dataclass
class Verdict:
    """What one case produced: per-row messages and the batch message."""

    row_messages: list[str | None]
    batch_message: str | None

    @property
    def passed(self) -> bool:
        return self.batch_message is None and all(m is None for m in self.row_messages)


def run_case(kind: AssertionType, params: Mapping[str, Any], rows: Sequence[Any]) -> Verdict:
    """Run ``rows`` through a fresh state the way the engine does."""
    state = kind.start(params)
    messages = [kind.observe(state, row, params) for row in rows]
    return Verdict(messages, kind.finalize(state, params))


class AssertionTypeSuite(abc.ABC):
    """The assertion-type contract as tests. Subclass, set ``__test__ = True``, describe it."""

    __test__ = False

    @abc.abstractmethod
    @pytest.fixture
    def assertion_type(self) -> AssertionType | type[AssertionType]:
        """What the plugin registers: the class (instantiated with no arguments) or an
        instance."""

    @abc.abstractmethod
    @pytest.fixture
    def valid_params(self) -> list[Mapping[str, Any]]:
        """Params ``check_config`` accepts (at least one)."""

    @pytest.fixture
    def invalid_params(self) -> list[Mapping[str, Any]]:
        """Params ``check_config`` must refuse with a message (none by default)."""
        return []

    @abc.abstractmethod
    @pytest.fixture
    def cases(self) -> list[AssertionCase]:
        """Rows with their expected verdict: at least one passing and one failing case."""

    @pytest.fixture
    def kind(self, assertion_type: AssertionType | type[AssertionType]) -> AssertionType:
        """The type as the engine uses it: a class is instantiated once."""
        return assertion_type() if isinstance(assertion_type, type) else assertion_type

    # -- shape --------------------------------------------------------------------------------

    def test_satisfies_the_protocol(self, kind: AssertionType) -> None:
        assert isinstance(kind, AssertionType)
        assert isinstance(kind.name, str) and kind.name.isidentifier()
        assert kind.name not in RESERVED_KEYS, "on_failure/custom/thresholds are reserved keys"
        assert isinstance(kind.row_scoped, bool)

    def test_the_class_builds_with_no_arguments(
        self, assertion_type: AssertionType | type[AssertionType]
    ) -> None:
        if isinstance(assertion_type, type):
            assert isinstance(assertion_type(), AssertionType)

    # -- check_config -------------------------------------------------------------------------

    def test_valid_params_pass_check_config(
        self, kind: AssertionType, valid_params: list[Mapping[str, Any]]
    ) -> None:
        assert valid_params, "give at least one valid params mapping"
        for params in valid_params:
            assert kind.check_config(params, CONTEXT) == [], params

    def test_invalid_params_are_refused_with_messages(
        self, kind: AssertionType, invalid_params: list[Mapping[str, Any]]
    ) -> None:
        for params in invalid_params:
            problems = kind.check_config(params, CONTEXT)
            assert problems and all(isinstance(p, str) and p for p in problems), params

    def test_check_config_answers_with_and_without_declared_columns(
        self, kind: AssertionType, cases: list[AssertionCase]
    ) -> None:
        for case in cases:
            ctx = AssertionContext("kit_source", "kit_resource", case.declared_columns)
            assert kind.check_config(case.params, ctx) == [], case
            assert isinstance(kind.check_config(case.params, CONTEXT), list)

    def test_check_config_leaves_params_alone(
        self, kind: AssertionType, valid_params: list[Mapping[str, Any]]
    ) -> None:
        for params in valid_params:
            before = copy.deepcopy(dict(params))
            kind.check_config(params, CONTEXT)
            assert dict(params) == before

    # -- verdicts -----------------------------------------------------------------------------

    def test_cases_have_both_verdicts(self, cases: list[AssertionCase]) -> None:
        assert {c.passes for c in cases} == {True, False}, "give a passing and a failing case"

    def test_each_case_gets_its_verdict(
        self, kind: AssertionType, cases: list[AssertionCase]
    ) -> None:
        for case in cases:
            verdict = run_case(kind, case.params, case.rows)
            assert verdict.passed is case.passes, (case.label or case, verdict)
            for message in (*verdict.row_messages, verdict.batch_message):
                assert message is None or (isinstance(message, str) and message), case

    def test_a_batch_type_never_judges_single_rows(
        self, kind: AssertionType, cases: list[AssertionCase]
    ) -> None:
        if kind.row_scoped:
            pytest.skip("row-scoped type")
        for case in cases:
            assert run_case(kind, case.params, case.rows).row_messages == [None] * len(case.rows)

    def test_a_row_scoped_type_fails_rows_not_the_batch(
        self, kind: AssertionType, cases: list[AssertionCase]
    ) -> None:
        # quarantine keeps the failing rows only: the verdict must come per row
        if not kind.row_scoped:
            pytest.skip("batch type")
        for case in cases:
            verdict = run_case(kind, case.params, case.rows)
            assert verdict.batch_message is None, case
            if not case.passes:
                assert any(m is not None for m in verdict.row_messages), case

    def test_observe_never_changes_a_row(
        self, kind: AssertionType, cases: list[AssertionCase]
    ) -> None:
        for case in cases:
            rows = copy.deepcopy([dict(r) for r in case.rows])
            state = kind.start(case.params)
            for row in rows:
                kind.observe(state, row, case.params)
            assert rows == [dict(r) for r in case.rows], case

    def test_every_start_is_a_fresh_state(
        self, kind: AssertionType, cases: list[AssertionCase]
    ) -> None:
        # one state per resource and run: a used state must not leak into the next
        for case in cases:
            expected = run_case(kind, case.params, case.rows).passed
            used = kind.start(case.params)
            for row in case.rows:
                kind.observe(used, row, case.params)
            kind.finalize(used, case.params)
            assert run_case(kind, case.params, case.rows).passed is expected, case

    def test_one_instance_serves_two_resources_at_once(
        self, kind: AssertionType, cases: list[AssertionCase]
    ) -> None:
        # the type is instantiated once per run; two resources interleave their calls
        failing = next(c for c in cases if not c.passes)
        passing = next(c for c in cases if c.passes)
        a, b = kind.start(failing.params), kind.start(passing.params)
        a_msgs, b_msgs = [], []
        for i in range(max(len(failing.rows), len(passing.rows))):
            if i < len(failing.rows):
                a_msgs.append(kind.observe(a, failing.rows[i], failing.params))
            if i < len(passing.rows):
                b_msgs.append(kind.observe(b, passing.rows[i], passing.params))
        assert Verdict(b_msgs, kind.finalize(b, passing.params)).passed
        assert not Verdict(a_msgs, kind.finalize(a, failing.params)).passed

    def test_a_state_may_be_observed_from_another_thread(
        self, kind: AssertionType, cases: list[AssertionCase]
    ) -> None:
        # parallelized resources call observe from worker threads (serialized per resource)
        case = next(c for c in cases if not c.passes)
        state = kind.start(case.params)
        messages: list[str | None] = []
        errors: list[BaseException] = []

        def feed() -> None:
            try:
                messages.extend(kind.observe(state, row, case.params) for row in case.rows)
            except BaseException as exc:  # re-raised in the test thread
                errors.append(exc)

        thread = threading.Thread(target=feed)
        thread.start()
        thread.join()
        assert errors == []
        assert not Verdict(messages, kind.finalize(state, case.params)).passed
