"""The alert-sink conformance kit.

Subclass :class:`AlertSinkSuite` in your plugin's tests::

    class TestMySink(AlertSinkSuite):
        __test__ = True

        @pytest.fixture
        def sink_factory(self):
            return MySink  # what your plugin registers

        @pytest.fixture
        def sink_context(self, tmp_path, inbox):
            return AlertSinkContext("mine", tmp_path, {"url": inbox.url})

        @pytest.fixture
        def delivered(self, inbox):
            return lambda: inbox.documents  # every alert received so far, as JSON-like dicts

``delivered`` is how the kit sees the far side: a zero-argument callable listing what arrived,
each alert as a mapping with at least the :class:`~dlt_ops.alerts.Alert` fields the sink sends.
Give ``undeliverable_context`` (a context whose destination refuses or cannot be reached) to
check that a failed delivery raises, which is how the core knows to log it.
"""

from __future__ import annotations

import abc
import json
import threading
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import pytest

from dlt_ops.alerts.model import Alert, AlertKind, AlertSink, AlertSinkContext, AlertSinkFactory
from dlt_ops.redact import remember_secret

Delivered = Callable[[], list[Mapping[str, Any]]]


def make_alert(kind: AlertKind = AlertKind.run_failed, **fields: Any) -> Alert:
    """A plausible alert (override any field)."""
    values: dict[str, Any] = dict(
        kind=kind,
        source="kit_source",
        run_id="0123456789abcdef0123456789abcdef",
        pipeline_name="kit_source_pipeline",
        destination="kitdb",
        dataset="kit_dataset",
        trigger_source="cli",
        started_at=datetime(2026, 1, 5, 8, 30, tzinfo=UTC),
        completed_at=datetime(2026, 1, 5, 8, 31, tzinfo=UTC),
        message="ValueError: the API answered 503",
    )
    values.update(fields)
    return Alert(**values)


class AlertSinkSuite(abc.ABC):
    """The alert-sink contract as tests. Subclass, set ``__test__ = True``, give the fixtures."""

    __test__ = False

    @abc.abstractmethod
    @pytest.fixture
    def sink_factory(self) -> AlertSinkFactory:
        """What the plugin registers: called with ``sink_context``, returns the sink."""

    @abc.abstractmethod
    @pytest.fixture
    def delivered(self) -> Delivered:
        """Lists the alerts that reached the far side so far, oldest first."""

    @pytest.fixture
    def sink_context(self, tmp_path: Any) -> AlertSinkContext:
        """The context the factory is called with (override to pass options)."""
        return AlertSinkContext("kit", tmp_path, {})

    @pytest.fixture
    def undeliverable_context(self) -> AlertSinkContext | None:
        """A context whose alerts cannot be delivered (``None``: the check is skipped)."""
        return None

    @pytest.fixture
    def sink(self, sink_factory: AlertSinkFactory, sink_context: AlertSinkContext) -> AlertSink:
        """A sink built the way the core builds one."""
        return sink_factory(sink_context)

    def test_satisfies_the_protocol(self, sink: AlertSink) -> None:
        assert isinstance(sink, AlertSink)
        assert isinstance(sink.target, str) and sink.target

    def test_a_failed_run_is_delivered_once_with_its_facts(
        self, sink: AlertSink, delivered: Delivered
    ) -> None:
        before = len(delivered())
        alert = make_alert()
        sink.send(alert)
        (got,) = delivered()[before:]
        assert got["kind"] == "run_failed"
        assert (got["run_id"], got["source"]) == (alert.run_id, alert.source)
        assert got["message"] == alert.message

    def test_a_failed_assertion_carries_its_checks(
        self, sink: AlertSink, delivered: Delivered
    ) -> None:
        before = len(delivered())
        checks = ("unique_columns on events", "min_rows_per_load on events")
        sink.send(make_alert(AlertKind.assertion_failed, failed_checks=checks))
        (got,) = delivered()[before:]
        assert got["kind"] == "assertion_failed"
        assert list(got["failed_checks"]) == list(checks)

    def test_the_delivered_alert_is_redacted(self, sink: AlertSink, delivered: Delivered) -> None:
        # an alert's strings are redacted when it is built, but drift and failed checks come
        # from other plugins and a secret may be learnt later: the sink redacts what it sends
        secret = f"kit-secret-{uuid.uuid4().hex}"
        remember_secret(secret)
        before = len(delivered())
        alert = make_alert(
            message=f"ValueError: https://bob:pw-{secret}@api.example.com refused {secret}",
            failed_checks=(f"accepted_values quoting {secret} on events",),
            drift=({"column": "token", "detail": {"seen": secret}},),
        )
        sink.send(alert)
        (got,) = delivered()[before:]
        body = json.dumps(got, default=str)
        assert secret not in body, f"a remembered secret was delivered: {body[:500]}"
        assert "pw-" not in body, f"a URL password was delivered: {body[:500]}"
        assert got["run_id"] == alert.run_id  # still the alert, only masked

    def test_alerts_arrive_in_the_order_sent(self, sink: AlertSink, delivered: Delivered) -> None:
        before = len(delivered())
        for i in range(3):
            sink.send(make_alert(run_id=f"run{i:029d}"))
        assert [d["run_id"] for d in delivered()[before:]] == [f"run{i:029d}" for i in range(3)]

    def test_a_second_sink_from_the_same_context_delivers_too(
        self,
        sink: AlertSink,
        sink_factory: AlertSinkFactory,
        sink_context: AlertSinkContext,
        delivered: Delivered,
    ) -> None:
        # the core builds the sinks once per run that alerts
        before = len(delivered())
        sink.send(make_alert(run_id="a" * 32))
        sink_factory(sink_context).send(make_alert(run_id="b" * 32))
        assert [d["run_id"] for d in delivered()[before:]] == ["a" * 32, "b" * 32]

    def test_send_works_from_another_thread(self, sink: AlertSink, delivered: Delivered) -> None:
        # run-finished observers may run on a worker thread (backfill chunks)
        before = len(delivered())
        errors: list[BaseException] = []

        def send() -> None:
            try:
                sink.send(make_alert())
            except BaseException as exc:  # re-raised in the test thread
                errors.append(exc)

        thread = threading.Thread(target=send)
        thread.start()
        thread.join()
        assert errors == [] and len(delivered()) == before + 1

    def test_an_undeliverable_alert_raises(
        self, sink_factory: AlertSinkFactory, undeliverable_context: AlertSinkContext | None
    ) -> None:
        # the core logs a raising sink at ERROR and carries on; a silent loss is never seen
        if undeliverable_context is None:
            pytest.skip("no undeliverable_context given")
        with pytest.raises(Exception):  # noqa: B017 - any exception: the core catches them all
            sink_factory(undeliverable_context).send(make_alert())
