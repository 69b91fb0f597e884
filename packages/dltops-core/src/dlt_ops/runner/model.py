"""The run's typed stages: what is asked, how far a run got, what came out, and the gates.

``RunRequest`` (the caller's ask) → ``PreparedRun`` (resolved once, see ``prepare.py``; shared
by a ``pipeline run`` and by every chunk of one backfill) → ``RunContext`` with its
``RunState`` (one run) → ``RunOutcome`` (the terminal ledger record, dlt's load info, the gates
that ran). The extract-gate protocols live here too, next to the run they see.

This module imports no feature and nothing of ``project``: code running inside a run
(checkpoints, gates) may depend on it without reaching back up.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from dlt import Pipeline
    from dlt.common.pipeline import LoadInfo
    from dlt.extract.source import DltSource

    from dlt_ops.adapters import DestinationSession
    from dlt_ops.config import ProjectConfig
    from dlt_ops.ledger import RunRecord
    from dlt_ops.ledger.resumes import Resume
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.runner.half_written import Dropped
    from dlt_ops.runner.packages import LoadedBooks
    from dlt_ops.runner.progress import ProgressSink
    from dlt_ops.runner.skipped import BadFile
    from dlt_ops.runner.window import Window
    from dlt_ops.target import Target


class RunPhase(StrEnum):
    """How far a run got: observers need to know whether its package can have loaded."""

    setup = "setup"
    extract = "extract"
    gates = "gates"
    normalize = "normalize"
    load = "load"
    done = "done"


@dataclass(frozen=True)
class OrchestratorRun:
    """The orchestrator's own run behind a dlt-ops run, written to the ledger row as
    ``orchestrator_run_id`` and ``orchestrator_try``: Airflow's ``<dag_id>/<run_id>`` and the
    task's try number, a Dagster run id and its step's attempt. ``try_number`` counts from 1
    (the first attempt) whatever the orchestrator's own convention."""

    run_id: str
    try_number: int | None = None


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
    #: The orchestrator run that started this one (an Airflow task, a Dagster step).
    orchestrator: OrchestratorRun | None = None
    #: dlt working directory override (backfill gives each chunk its own).
    working_dir: Path | None = None
    #: A working directory whose run just completed against the same destination and dataset
    #: (the backfill's previous chunk): a new ``working_dir`` starts from its state and schemas
    #: instead of restoring them from the destination (see ``runner/working_dir.py``).
    seed_state_from: Path | None = None
    #: Adapter-gated features the caller engages (e.g. ``("backfill",)``), for the preflight.
    engaged_features: tuple[str, ...] = ()
    #: Wraps ``pipeline.load()`` (backfill: a lock so concurrent chunks load one at a time).
    load_guard: Callable[[], AbstractContextManager[None]] | None = None
    #: How long to wait for the source's run lease: ``None`` refuses at once when another run
    #: holds it, ``math.inf`` waits for good (see ``runner/lease.py``).
    wait: float | None = None
    #: The caller already holds the source's lease (the scheduler re-checks "due" under it).
    lease_held: bool = False
    #: Remove the pipeline's local working dir first (its pending packages and local state):
    #: the recovery from a half-written one (``--drop-pending``, see ``runner/half_written.py``).
    drop_pending: bool = False
    #: Who shows the run's progress (step, rows per table), fed by dlt's collector.
    progress: ProgressSink | None = None
    #: ``backfill --seed-cursor``: the window the backfill covered; before extracting, each
    #: selected incremental's stored cursor moves forward to its end (``runner/seed_cursor.py``)
    seed_cursor: Window | None = None
    #: A backfill chunk reclaimed from a dead holder (the claim's reason): its earlier attempts'
    #: ``running`` rows are dead, and this run closes them (``ledger/abandoned.py``).
    reclaimed: str | None = None


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
    #: What ``--drop-pending`` removed before the run built its pipeline.
    dropped: Dropped | None = None
    #: Dead runs this run closed ``completed`` because their load had committed, with the rows
    #: per table it landed (``None``: not known per table); their receipts are written for them.
    closed_landed: list[tuple[RunRecord, Mapping[str, int] | None]] = field(default_factory=list)
    #: Pending packages found committed (in ``_dlt_loads``) before the run and booked by it:
    #: their run had ended without booking them.
    settled: list[str] = field(default_factory=list)
    #: Rows the run's earlier ``completed`` attempts booked (a reclaimed backfill chunk whose
    #: load had committed): the window is loaded, this attempt loads and books none of it.
    booked_earlier: int | None = None
    #: Checkpointed resources that resumed from a checkpoint, with the span they skipped
    #: (``dlt_ops.ledger.resumes.Resume``), booked on the ledger row and the receipt.
    resumes: list[Resume] = field(default_factory=list)
    #: Files a filesystem reader could not parse and ``on_bad_file`` skipped.
    bad_files: list[BadFile] = field(default_factory=list)


@dataclass
class RunContext:
    """One run's identity and services, and its state (updated by the runner)."""

    run_id: str
    source: str
    resources: tuple[str, ...]
    window: Window | None
    config: ProjectConfig
    registry: PluginRegistry
    #: Where the run's tables live: engine, dataset, database, tier, capabilities.
    target: Target
    #: Opens (once) and returns the run's destination session; raises on core tier.
    open_session: Callable[[], DestinationSession]
    backfill_id: str | None = None
    #: How far the run got and what it built (phase, dlt pipeline, tables, gates).
    state: RunState = field(default_factory=RunState)

    @property
    def where(self) -> Target:
        """The :attr:`target` (its older name; engine, dataset and pipeline name)."""
        return self.target

    @property
    def full_tier(self) -> bool:
        """Whether the destination has an adapter (``target.has_adapter``)."""
        return self.target.has_adapter

    @property
    def pipeline_name(self) -> str:
        """dlt pipeline name of the run."""
        return self.target.pipeline_name


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
    #: Rows booked on earlier attempts of the run (see ``RunState.booked_earlier``).
    booked_earlier: int = 0

    @property
    def ok(self) -> bool:
        """Whether the run completed."""
        return self.error is None


# -- extract gates ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResourceVerdicts:
    """What a gate decided about one resource's rows: held out, loaded with a warning, or
    counted towards failing the run."""

    rejected: int = 0
    warned: int = 0
    failed: int = 0


@dataclass(frozen=True)
class GateSummary:
    """One gate's account of one run."""

    gate: str
    resources: Mapping[str, ResourceVerdicts] = field(default_factory=dict)
    #: ``"<check> on <resource>"`` for every check that failed the run.
    failed_checks: tuple[str, ...] = ()


class ExtractGate(Protocol):
    """A check between extract and load, built fresh for each run."""

    #: Short label (``assertions``, ``receipts``), used in logs and summaries.
    name: str

    def attach(self, source: DltSource) -> DltSource:
        """Wire into ``source`` before extract; return the (possibly wrapped) source."""

    def after_extract(self, pipeline: Pipeline, load_id: str) -> None:
        """Decide on the extracted package ``load_id``; raise to stop the run before load."""

    def summary(self) -> GateSummary:
        """What the gate decided, per resource."""


class GateFactory(Protocol):
    """What a plugin returns from ``dlt_ops_extract_gates``: builds one gate per run."""

    def check(self, source: DltSource) -> None:
        """Static checks against the instantiated source (its selected resources); raise a
        :class:`~dlt_ops.errors.PreflightError` to refuse the run before extract."""

    def gate(self, run: RunContext, source: DltSource) -> ExtractGate | None:
        """The gate for this run (checks included), or ``None`` when nothing applies."""
