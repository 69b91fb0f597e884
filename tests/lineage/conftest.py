"""A loopback OpenLineage receiver and a strict check of what it received.

The receiver is a real HTTP server on 127.0.0.1 (a free port) that keeps every POST body and
answers 200. The check rebuilds each event with openlineage-python's own generated classes
(the spec's types, with their validators: UUID run ids, ISO-8601 times, the event-type enum)
and requires the rebuilt event to serialise back to exactly what was received: a field the
spec does not define, a missing required field or a wrong type fails.
"""

from __future__ import annotations

import json
import threading
import time
import types
import typing
from collections.abc import Iterator
from enum import Enum
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attr
import pytest


class Receiver:
    """What the loopback server got: request paths, headers and JSON bodies."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.raw: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.cond = threading.Condition()
        self.url = ""

    def wait_for(self, count: int, timeout: float = 60) -> list[dict[str, Any]]:
        """The events once at least ``count`` arrived (polled with a deadline)."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while len(self.events) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"{len(self.events)} events arrived, expected {count}")
                self.cond.wait(left)
            return list(self.events)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    got = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
            with got.cond:
                got.raw.append(body)
                got.events.append(json.loads(body))
                got.headers.append(dict(self.headers))
                got.paths.append(self.path)
                got.cond.notify_all()
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    got.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield got
    server.shutdown()
    server.server_close()


def _facet_classes() -> dict[str, type]:
    from openlineage.client.facet_v2 import (
        error_message_run,
        job_type_job,
        nominal_time_run,
        output_statistics_output_dataset,
        parent_run,
        processing_engine_run,
        schema_dataset,
        tags_run,
    )

    return {
        # the client adds its own version as a run tag (and job tags from its config)
        "tags": tags_run.TagsRunFacet,
        "parent": parent_run.ParentRunFacet,
        "errorMessage": error_message_run.ErrorMessageRunFacet,
        "nominalTime": nominal_time_run.NominalTimeRunFacet,
        "processing_engine": processing_engine_run.ProcessingEngineRunFacet,
        "jobType": job_type_job.JobTypeJobFacet,
        "schema": schema_dataset.SchemaDatasetFacet,
        "outputStatistics": output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet,
    }


def _init_name(field: attr.Attribute) -> str:
    return field.alias if getattr(field, "alias", None) else field.name.lstrip("_")


def _structure(tp: Any, value: Any, where: str, facet_key: str | None = None) -> Any:
    """``value`` (JSON) as an instance of ``tp``, strictly."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(tp) if a is not type(None)]
        if value is None:
            return None
        assert len(options) == 1, f"{where}: ambiguous type {tp}"
        return _structure(options[0], value, where, facet_key)
    if origin is list:
        assert isinstance(value, list), f"{where}: expected a list, got {value!r}"
        (item,) = typing.get_args(tp)
        return [_structure(item, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        assert isinstance(value, dict), f"{where}: expected an object, got {value!r}"
        facets = _facet_classes()
        out = {}
        for key, v in value.items():
            assert key in facets, f"{where}: facet {key!r} is not one this check knows"
            out[key] = _structure(facets[key], v, f"{where}.{key}")
        return out
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp(value)
    if isinstance(tp, type) and attr.has(tp):
        assert isinstance(value, dict), f"{where}: expected an object for {tp.__name__}"
        attr.resolve_types(tp)
        fields = {f.name: f for f in attr.fields(tp)}
        unknown = set(value) - set(fields)
        assert not unknown, f"{where}: {tp.__name__} has no field(s) {sorted(unknown)}"
        kwargs = {}
        for name, field in fields.items():
            if not field.init:
                continue
            if name not in value:
                assert field.default is not attr.NOTHING, f"{where}: {name} is required"
                continue
            kwargs[_init_name(field)] = _structure(field.type, value[name], f"{where}.{name}")
        built = tp(**kwargs)
        for name in ("schemaURL", "_schemaURL"):
            if name in value:
                assert value[name] == built._get_schema(), f"{where}: wrong {name}"
        return built
    if tp is float:
        assert isinstance(value, int | float) and not isinstance(value, bool), where
        return value
    if tp in (str, int, bool):
        assert isinstance(value, tp), f"{where}: expected {tp.__name__}, got {value!r}"
        return value
    raise AssertionError(f"{where}: no rule for {tp}")


def validate(event: dict[str, Any]) -> Any:
    """The received ``event`` as the client's ``RunEvent`` (raises when it is not one)."""
    from openlineage.client.event_v2 import RunEvent
    from openlineage.client.serde import Serde

    built = _structure(RunEvent, event, "event")
    assert Serde.to_dict(built) == event, "the event does not round-trip through RunEvent"
    return built


@pytest.fixture
def valid_event() -> Any:
    return validate


def lineage_config(url: str, **extra: str) -> str:
    """A ``[dlt_ops.lineage]`` table sending to ``url``."""
    lines = ['transport = "http"', f'url = "{url}"', *(f'{k} = "{v}"' for k, v in extra.items())]
    return "\n[dlt_ops.lineage]\n" + "\n".join(lines) + "\n"
