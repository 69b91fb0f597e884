"""The ``TriggerEmitter`` protocol: what a ``trigger_emitter`` plugin registers.

Every emitter names a ``trigger_source``. What it can do with the project's schedules is
told by the optional protocols it also implements: a :class:`ScheduleTarget` writes files for
another scheduler (``dlt-ops schedule emit --target <name>``: a crontab, a CI workflow); an
emitter without one only labels runs started elsewhere (``cli``, ``backfill``, the built-in
``y-scheduler``, ``airflow``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True)
class ScheduledSource:
    """One source with a schedule, as an emitter sees it."""

    name: str
    #: The schedule as written (``@hourly``, ``cron:15 3 * * *``).
    schedule: str
    #: Its five-field cron, read in ``timezone``.
    cron: str
    #: The IANA zone the cron is read in (``UTC`` unless the schedule or source names one).
    timezone: str = "UTC"


@runtime_checkable
class ScheduleTarget(Protocol):
    """An emitter that writes the project's schedules for another scheduler."""

    #: The file written when no ``-o`` is given, relative to the project root.
    default_path: str

    def render(
        self,
        sources: Sequence[ScheduledSource],
        *,
        root: str,
        trigger_source: str,
        cli: str = "dlt-ops",
        packages: Sequence[str] = ("dltops-core",),
    ) -> str:
        """The file's text: one entry per source calling ``<cli> pipeline run ...
        --trigger-source <trigger_source>``; ``root`` is the project root as the scheduler
        sees it, ``cli`` the dlt-ops executable there (an absolute path unless the target
        installs it), ``packages`` the distributions a fresh machine installs to run the
        sources (dltops-core and the adapters of their destinations)."""
        ...


#: The typed key: ``registry.get(TRIGGER_EMITTER, name)`` is a :class:`TriggerEmitter`.
TRIGGER_EMITTER: Kind[TriggerEmitter] = Kind("trigger_emitter", TriggerEmitter)
