"""One worker's chunk loop: claim in window order, run each claimed chunk, record the outcome.

Every worker (the in-process one, or each worker subprocess) runs this loop with its own
token, state session, lease keeper and load lock. Workers coordinate only through
``_dlt_backfills``: a chunk is executed by whoever wins its compare-and-swap claim.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dlt_ops.backfill.lease import LeaseKeeper, LoadLock
from dlt_ops.backfill.plan import BackfillPlan, Chunk
from dlt_ops.backfill.state import BackfillState, ChunkRow, ChunkStatus
from dlt_ops.errors import LeaseLostError
from dlt_ops.ledger import summarize_error
from dlt_ops.log import get_logger

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.runner.model import OrchestratorRun, RunOutcome
    from dlt_ops.runner.prepare import PreparedRun

log = get_logger(__name__)

LOAD_LOCK = "load"


@dataclass(frozen=True)
class BackfillOptions:
    """How to execute a plan (the CLI flags)."""

    dataset: str | None = None
    lease: timedelta = timedelta(minutes=10)
    max_attempts: int = 1
    continue_on_error: bool = False
    workers: int = 1
    #: the chunk runs' ``trigger_source`` (an orchestrator's partition run says ``dagster``)
    trigger_source: str = "backfill"
    #: the orchestrator run executing the chunk (its ledger row names it; the row's ``run_id``
    #: stays the chunk's own)
    orchestrator: OrchestratorRun | None = None


@dataclass(frozen=True)
class ChunkEvent:
    """Something that happened to one chunk, reported to the renderer.

    ``kind``: ``skipped`` (already completed), ``running``, ``completed``, ``failed`` (final
    for this invocation), ``retrying`` (failed, another attempt follows), ``held`` (another
    worker holds it), ``lost`` (our lease was taken over while it ran).
    """

    kind: str
    index: int
    attempt: int = 0
    records: int | None = None
    error: str | None = None
    holder: str | None = None
    worker: str | None = None
    until: str | None = None  # when the holder's lease expires (``held``)

    def to_json(self) -> str:
        """One JSON line (worker subprocess → parent)."""
        return json.dumps({"event": "chunk", **asdict(self)})

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ChunkEvent:
        """Inverse of :meth:`to_json` (the ``event`` key removed)."""
        return cls(**{k: v for k, v in data.items() if k != "event"})


Emit = Callable[[ChunkEvent], None]


class ChunkWorker:
    """Claims and runs the chunks of ``plan`` in window order, as one token."""

    def __init__(
        self,
        registry: PluginRegistry,
        config: ProjectConfig,
        plan: BackfillPlan,
        state: BackfillState,
        options: BackfillOptions,
        emit: Emit,
        should_stop: Callable[[], bool] = lambda: False,
        *,
        prepared: PreparedRun | None = None,
    ) -> None:
        self.registry, self.config, self.plan, self.state = registry, config, plan, state
        self.options, self.emit, self.should_stop = options, emit, should_stop
        #: Resolved once for the whole backfill (see ``service.check_source``); every chunk
        #: run reuses it instead of resolving the source again.
        self.prepared = prepared
        self.lock = LoadLock(state, LOAD_LOCK, options.lease)
        self.failed = False
        #: The working dir of the chunk this worker completed last, kept until the next one
        #: completes: the next chunk starts from its state and schemas (``seed_from_sibling``).
        self._seed: Path | None = None

    def run(self) -> None:
        """Walk the plan once; stop at the first failed chunk unless ``continue_on_error``."""
        keeper = LeaseKeeper(self.state, self.options.lease, self.lock)
        try:
            snapshot = self.state.rows(self.plan.backfill_id)
            for chunk in self.plan.chunks:
                if self.should_stop():
                    break
                row = snapshot.get(chunk.chunk_id)
                if row is not None and row.status == ChunkStatus.completed:
                    self._emit("skipped", chunk, records=row.records_loaded, holder=row.claimed_by)
                    continue
                if not self._run_chunk(chunk, keeper):
                    self.failed = True
                    if not self.options.continue_on_error:
                        break
        finally:
            keeper.close()
            self.lock.release()
            self._drop_seed()

    def _drop_seed(self) -> None:
        if self._seed is not None:
            shutil.rmtree(self._seed, ignore_errors=True)
            self._seed = None

    def run_one(self, chunk: Chunk, row: ChunkRow | None = None) -> bool:
        """Claim and run this one chunk (an orchestrator's mapped task); ``False`` when it
        failed. A chunk completed or held elsewhere is reported, not run. ``row``: the chunk's
        row as the caller just read it (the first claim decides on it instead of reading it
        again)."""
        keeper = LeaseKeeper(self.state, self.options.lease, self.lock)
        try:
            return self._run_chunk(chunk, keeper, known=row)
        finally:
            keeper.close()
            self.lock.release()
            self._drop_seed()

    def _emit(self, kind: str, chunk: Chunk, **fields: Any) -> None:
        self.emit(ChunkEvent(kind, chunk.index, worker=self.state.token, **fields))

    def _not_ours(self, chunk: Chunk) -> None:
        row = self.state.rows(self.plan.backfill_id).get(chunk.chunk_id)
        if row is not None and row.status == ChunkStatus.completed:
            self._emit("skipped", chunk, records=row.records_loaded, holder=row.claimed_by)
        else:
            until = row.lease_expires_at if row else None
            self._emit(
                "held", chunk, holder=row.claimed_by if row else None,
                until=f"{until:%Y-%m-%d %H:%M:%S} UTC" if until else None,
            )  # fmt: skip

    def _run_chunk(self, chunk: Chunk, keeper: LeaseKeeper, *,
                   known: ChunkRow | None = None) -> bool:  # fmt: skip
        """Claim and run ``chunk`` up to ``max_attempts`` times; ``False`` when it failed.
        ``known`` (the row just read) serves the first claim only: a retry reads it again."""
        bid, cid = self.plan.backfill_id, chunk.chunk_id
        for attempt in range(1, self.options.max_attempts + 1):
            claim = self.state.claim(bid, cid, self.options.lease,
                                     known=known if attempt == 1 else None)  # fmt: skip
            if not claim:
                self._not_ours(chunk)
                return True
            with keeper.holding(bid, cid):
                try:
                    self.state.mark_running(bid, cid)
                except LeaseLostError:
                    self._emit("lost", chunk, attempt=attempt)
                    return True
                self._emit("running", chunk, attempt=attempt)
                # a reclaimed chunk's killed attempt keeps its own ledger row: the run closes it
                outcome = self._execute(chunk, reclaimed=claim.reason)
            if outcome.ok:
                records = outcome.record.records_loaded
                if records is not None:  # what a killed attempt's committed load booked, too
                    records += outcome.booked_earlier
                try:
                    self.state.mark_completed(bid, cid, records)
                except LeaseLostError as exc:
                    self._emit("lost", chunk, attempt=attempt, error=str(exc))
                    return True
                self._emit("completed", chunk, attempt=attempt, records=records)
                self._drop_seed()  # the next chunk starts from this one's state instead
                self._seed = self._working_dir(chunk)
                return True
            error = outcome.record.error_summary or "failed"
            self.state.mark_failed(bid, cid, error)
            last = attempt == self.options.max_attempts
            self._emit("failed" if last else "retrying", chunk, attempt=attempt, error=error)
        return False

    def _working_dir(self, chunk: Chunk) -> Path:
        return self.plan.working_dir(self.config.root, self.state.session.dataset, chunk)

    def _execute(self, chunk: Chunk, *, reclaimed: str | None = None) -> RunOutcome:
        """One chunk run through the runner; Ctrl-C demotes the chunk to ``failed`` first."""
        from dlt_ops.runner.run import RunRequest, execute_run

        request = RunRequest(
            source=self.plan.source,
            resources=self.plan.resources,
            dataset=self.options.dataset,
            window=chunk.window,
            trigger_source=self.options.trigger_source,
            run_id=chunk.run_id,
            backfill_id=self.plan.backfill_id,
            orchestrator=self.options.orchestrator,
            working_dir=self._working_dir(chunk),
            seed_state_from=self._seed,
            load_guard=self.lock.hold,
            reclaimed=reclaimed,
        )
        try:
            return execute_run(self.registry, self.config, request, prepared=self.prepared)
        except BaseException as exc:
            reason = summarize_error(exc) if isinstance(exc, Exception) else "interrupted"
            log.warning("backfill.chunk_aborted", chunk_id=chunk.chunk_id, reason=reason)
            try:
                self.state.mark_failed(self.plan.backfill_id, chunk.chunk_id, reason)
            except Exception as state_exc:  # keep the original error; the lease will expire
                log.error("backfill.demote_failed", chunk_id=chunk.chunk_id, error=str(state_exc))
            raise
