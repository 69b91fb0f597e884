"""The ``TriggerEmitter`` protocol: what a ``trigger_emitter`` plugin registers."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from dlt_ops.plugins.kinds import Kind


@runtime_checkable
class TriggerEmitter(Protocol):
    """A named origin of runs.

    It is registered under the name written to the ledger's ``trigger_source`` column and
    accepted by ``dlt-ops pipeline run --trigger-source``. ``description`` is one line saying
    who starts runs under that name (the CLI, a backfill, an orchestrator).
    """

    @property
    def description(self) -> str:
        """One line: who triggers runs under this name."""
        ...


#: The typed key: ``registry.get(TRIGGER_EMITTER, name)`` is a :class:`TriggerEmitter`.
TRIGGER_EMITTER: Kind[TriggerEmitter] = Kind("trigger_emitter", TriggerEmitter)
