"""Parsing, policy precedence, digests and the engine without dlt."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

from dlt_ops.assertions.digests import DigestSet, canonical, key_digest
from dlt_ops.assertions.engine import Entry, ResourceEngine
from dlt_ops.assertions.model import OnFailure, Threshold, parse_assertions
from dlt_ops.builtin.assertions import RequiredColumns, UniqueColumns


def test_shorthand_table_form_and_on_failure_precedence() -> None:
    parsed = parse_assertions({
        "events": {
            "on_failure": "warn",
            "max_violations": 4,
            "min_rows_per_load": 1,
            "unique_columns": {"value": ["id"], "on_failure": "quarantine"},
            "required_columns": {"value": ["kind"], "on_failure": "fail"},
            "custom": [{"predicate": "q:ok"}, {"predicate": "q.mod.ok", "on_failure": "fail"}],
        },
        "other": {"max_rows_per_load": 5},
    }, "src")  # fmt: skip
    assert parsed.issues == ()
    specs = {s.field.rsplit(".", 1)[-1]: s for s in parsed.for_resource("events").specs}
    assert specs["min_rows_per_load"].params == {"value": 1}
    assert specs["min_rows_per_load"].on_failure is OnFailure.warn  # resource level
    assert specs["unique_columns"].on_failure is OnFailure.quarantine  # assertion level
    assert specs["unique_columns"].params == {"value": ["id"]}
    assert specs["required_columns"].threshold == Threshold(4, None)  # inherited
    assert [s.predicate for s in parsed.for_resource("events").specs if s.is_custom] == [
        "q:ok", "q.mod.ok"]  # fmt: skip
    assert parsed.for_resource("other").specs[0].on_failure is OnFailure.fail  # built-in default
    assert parsed.quarantine_resources() == ["events"]
    assert parsed.referenced_types(["other"]) == ["max_rows_per_load"]


def test_structural_issues() -> None:
    parsed = parse_assertions({"a": 3, "b": {"custom": {"predicate": "x:y"}},
                               "c": {"max_violation_ratio": 1.5}}, "src")  # fmt: skip
    fields = [i.field for i in parsed.issues]
    assert fields == ["assertions.a", "assertions.b.custom", "assertions.c.max_violation_ratio"]
    assert parse_assertions([1], "src").issues[0].field == "assertions"


def test_threshold_semantics() -> None:
    assert Threshold().exceeded(1, 100)
    assert not Threshold(max_violations=2).exceeded(2, 3)
    assert Threshold(max_violations=2).exceeded(3, 1000)
    assert not Threshold(max_violation_ratio=0.01).exceeded(10, 1000)
    assert Threshold(max_violation_ratio=0.01).exceeded(11, 1000)


def test_canonical_keys_unify_equal_values_and_keep_types_apart() -> None:
    utc = datetime(2026, 1, 1, 12, tzinfo=UTC)
    plus2 = utc.astimezone(timezone(timedelta(hours=2)))
    assert canonical(1) == canonical(1.0) == canonical(Decimal("1.00"))
    assert canonical(utc) == canonical(plus2)
    assert canonical("1") != canonical(1) != canonical(True)
    assert key_digest([1, "a"]) != key_digest(["1", "a"])
    seen = DigestSet()
    assert seen.add(key_digest([1])) and not seen.add(key_digest([1.0]))
    assert all(seen.add(key_digest([i])) for i in range(2, 5000))
    assert len(seen) == 4999 and not seen.add(key_digest([4999]))


def _engine(*specs: tuple[object, str, str]) -> ResourceEngine:
    fields = {}
    for atype, value, mode in specs:
        fields[atype.name] = {"value": value, "on_failure": mode}
    parsed = parse_assertions({"r": fields}, "s")
    types = {t.name: t for t, _, _ in specs}
    entries = [Entry(s, atype=types[s.type_name]) for s in parsed.for_resource("r").specs]
    return ResourceEngine("s", "r", entries)


def test_every_assertion_sees_every_row_whatever_the_order() -> None:
    for order in ((0, 1), (1, 0)):
        pairs = [(RequiredColumns(), ["kind"], "quarantine"), (UniqueColumns(), ["id"], "fail")]
        engine = _engine(*(pairs[i] for i in order))
        kept = [engine.observe(r) for r in ({"id": 1, "kind": "a"}, {"id": 1})]
        assert kept == [True, False]  # quarantined
        (failure,) = engine.finalize()  # ... and still fails the run
        assert (failure.assertion_type, failure.message) == ("unique_columns",
                                                             "duplicate key id=1")  # fmt: skip
        assert engine.summary()["rejected"] == 1 and engine.summary()["failed"] == 1
