"""The run's typed stages: what is asked, what was prepared once, how far a run got, what came
out.

``RunRequest`` (the caller's ask) → ``PreparedRun`` (resolved once: project, source, resources,
destination, dataset, tier, the gate factories plugins contribute; shared by a ``pipeline run``
and by every chunk of one backfill) → ``RunContext`` (one run, see ``context.py``) →
``RunOutcome`` (the terminal ledger record, dlt's load info, the gates that ran).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dlt import Pipeline
    from dlt.common.pipeline import LoadInfo
    from dlt.extract.source import DltSource

    from dlt_ops.config import ProjectConfig
    from dlt_ops.destinations import ResolvedDestination
    from dlt_ops.ledger import RunRecord
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.project import Project
    from dlt_ops.project.introspect import Introspection
    from dlt_ops.runner.gates import ExtractGate, GateFactory
    from dlt_ops.runner.packages import LoadedBooks
    from dlt_ops.runner.window import Window


class RunPhase(StrEnum):
    """How far a run got: observers need to know whether its package can have loaded."""

    setup = "setup"
    extract = "extract"
    gates = "gates"
    normalize = "normalize"
    load = "load"
    done = "done"


@dataclass(frozen=True)
class RunRequest:
    """What to run. ``window`` bounds every incremental to ``[start, end)``."""

    source: str
    resources: tuple[str, ...] = ()
    dataset: str | None = None
    window: Window | None = None
    trigger_source: str = "cli"
    run_id: str | None = None
    backfill_id: str | None = None
    #: dlt working directory override (backfill gives each chunk its own).
    working_dir: Path | None = None
    #: Adapter-gated features the caller engages (e.g. ``("backfill",)``), for the preflight.
    engaged_features: tuple[str, ...] = ()
    #: Wraps ``pipeline.load()`` (backfill: a lock so concurrent chunks load one at a time).
    load_guard: Callable[[], AbstractContextManager[None]] | None = None


@dataclass
class PreparedRun:
    """Everything resolved once for one source and dataset, before anything is written.

    The source module is imported lazily, once (:meth:`loaded`): a plain run imports it inside
    its ledger bookkeeping, so an import failure still ends a ledger row; a backfill imports it
    up front in its entry checks and every chunk reuses it.
    """

    config: ProjectConfig
    registry: PluginRegistry
    project: Project
    source: str
    resources: tuple[str, ...]
    where: ResolvedDestination
    full_tier: bool
    #: One factory per plugin that contributes an extract gate (``dlt_ops_extract_gates``).
    gate_factories: tuple[GateFactory, ...] = ()
    _loaded: Introspection | None = field(default=None, repr=False)

    @property
    def pipeline_name(self) -> str:
        """dlt pipeline name of the source."""
        return self.where.pipeline_name

    def loaded(self) -> Introspection:
        """The sandbox-checked, imported source module (imported on first call only)."""
        if self._loaded is None:
            from dlt_ops.project.introspect import load_source

            self._loaded = load_source(self.project, self.config, self.source)
        return self._loaded

    def instantiate(self) -> DltSource:
        """A fresh ``DltSource`` with the requested resources selected."""
        from dlt_ops.errors import UnknownResourceError

        source_fn = self.loaded().source_fn
        assert source_fn is not None  # load_source raises when the module has no source
        source: DltSource = source_fn()
        if not self.resources:
            return source
        known = list(source.resources.keys())
        unknown = [r for r in self.resources if r not in known]
        if unknown:
            raise UnknownResourceError(self.source, unknown, known)
        return source.with_resources(*self.resources)


@dataclass
class RunState:
    """What one run has built so far, for gates and observers (updated by the runner)."""

    phase: RunPhase = RunPhase.setup
    pipeline: Pipeline | None = None
    #: Selected resource → its root table name.
    tables: dict[str, str] = field(default_factory=dict)
    gates: list[ExtractGate] = field(default_factory=list)
    #: What the load step booked, this run's packages and earlier runs' pending ones.
    loaded: LoadedBooks | None = None


@dataclass(frozen=True)
class RunOutcome:
    """What happened: the final ledger record, how far the run got, and on success dlt's load
    info. Frozen, so no observer can change it; ``reports`` are short texts observers append
    for the person running the command (the receipt table)."""

    record: RunRecord
    phase: RunPhase
    error: BaseException | None = None
    load_info: LoadInfo | None = None
    pipeline: Pipeline | None = None
    gates: tuple[ExtractGate, ...] = ()
    reports: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the run completed."""
        return self.error is None
