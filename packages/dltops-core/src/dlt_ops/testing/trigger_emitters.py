"""The trigger-emitter conformance kit.

Subclass :class:`TriggerEmitterSuite` in your plugin's tests::

    class TestNomadEmitter(TriggerEmitterSuite):
        __test__ = True

        @pytest.fixture
        def emitter(self):
            return NomadTarget()  # what your plugin registers

        @pytest.fixture
        def name(self):
            return "nomad"  # the name it is registered under: the ledger's trigger_source

Every emitter is checked as a named origin of runs (accepted by ``pipeline run
--trigger-source``). An emitter that is also a :class:`~dlt_ops.triggers.ScheduleTarget` (a
``schedule emit --target`` target) is checked to render each scheduled source as a
``pipeline run`` of that source under its own trigger source; those tests skip otherwise.
"""

from __future__ import annotations

import abc
import re
from typing import Any

import pytest

from dlt_ops.testing._inline import inline_registry
from dlt_ops.triggers.protocol import (
    TRIGGER_EMITTER,
    ScheduledSource,
    ScheduleTarget,
    TriggerEmitter,
)

#: The sources a schedule target renders in the kit.
SOURCES = (
    ScheduledSource("kit_orders", "@hourly", "0 * * * *"),
    ScheduledSource("kit_events", "cron:15 3 * * *", "15 3 * * *", "Europe/Berlin"),
)
ROOT = "/srv/kit project"
CLI = "/opt/kit/bin/dlt-ops"


class TriggerEmitterSuite(abc.ABC):
    """The trigger-emitter contract as tests. Subclass, set ``__test__ = True``, give the
    emitter and its name."""

    __test__ = False

    @abc.abstractmethod
    @pytest.fixture
    def emitter(self) -> TriggerEmitter:
        """What the plugin registers."""

    @abc.abstractmethod
    @pytest.fixture
    def name(self) -> str:
        """The name it is registered under (the ledger's ``trigger_source``)."""

    def _target(self, emitter: TriggerEmitter) -> ScheduleTarget:
        if not isinstance(emitter, ScheduleTarget):
            pytest.skip("not a schedule target: it only labels runs started elsewhere")
        return emitter

    def _render(self, target: ScheduleTarget, name: str, **extra: Any) -> str:
        return target.render(SOURCES, root=ROOT, trigger_source=name, cli=CLI, **extra)

    # -- every emitter ------------------------------------------------------------------------

    def test_satisfies_the_protocol(self, emitter: TriggerEmitter) -> None:
        assert isinstance(emitter, TriggerEmitter)
        description = emitter.description
        assert isinstance(description, str) and description.strip()
        assert "\n" not in description.strip(), "the description is one line"

    def test_the_name_is_a_plain_trigger_source(self, name: str) -> None:
        # written to the ledger and passed on command lines a scheduler runs unquoted
        assert re.fullmatch(r"[a-z0-9][a-z0-9_.-]*", name), name

    def test_registers_and_is_found_by_name(self, emitter: TriggerEmitter, name: str) -> None:
        registry = inline_registry("trigger_emitter", emitter, name)
        assert registry.get(TRIGGER_EMITTER, name) is emitter

    # -- schedule targets ---------------------------------------------------------------------

    def test_a_target_names_a_relative_default_path(self, emitter: TriggerEmitter) -> None:
        target = self._target(emitter)
        path = target.default_path
        assert isinstance(path, str) and path and not path.startswith("/") and ".." not in path

    def test_each_source_runs_under_the_emitters_name(
        self, emitter: TriggerEmitter, name: str
    ) -> None:
        text = self._render(self._target(emitter), name)
        assert isinstance(text, str) and text.strip()
        for source in SOURCES:
            assert source.name in text, f"{source.name} is not in the rendered file"
        assert "pipeline run" in text
        assert f"--trigger-source {name}" in text

    def test_an_unscheduled_source_is_left_out(self, emitter: TriggerEmitter, name: str) -> None:
        target = self._target(emitter)
        text = target.render(SOURCES[:1], root=ROOT, trigger_source=name, cli=CLI)
        assert SOURCES[0].name in text and SOURCES[1].name not in text

    def test_the_root_reaches_the_command(self, emitter: TriggerEmitter, name: str) -> None:
        # a scheduler starts in its own directory: the command must say where the project is
        text = self._render(self._target(emitter), name)
        assert ROOT in text or repr(ROOT) in text or ROOT.replace(" ", "\\ ") in text

    def test_rendering_is_deterministic(self, emitter: TriggerEmitter, name: str) -> None:
        # the file is committed: two emits of one project must not differ
        target = self._target(emitter)
        assert self._render(target, name) == self._render(target, name)
