"""``_dlt_backfills``: one row per chunk of a plan, in the source's own destination and dataset.

Every write here is load-bearing: a statement that fails raises ``BackfillStateError``, and a
transition that matches no row (our lease was taken over) raises ``LeaseLostError``. Claims are
compare-and-swap on rows affected, so exactly one worker wins a chunk.

State machine (docs/backfill.md)::

    seed → pending ─claim─→ claimed ─→ running ─→ completed
                 ↑                          └───→ failed ─claim─┐
                 └──── expired lease (claimed|running) ─claim───┘
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from dlt_ops.adapters import Column, ColumnType, DestinationSession, Statement, TableSpec
from dlt_ops.backfill.plan import BackfillPlan, Chunk
from dlt_ops.clock import utcnow
from dlt_ops.errors import BackfillStateError, DestinationError, LeaseLostError
from dlt_ops.liveness import holder_gone
from dlt_ops.log import get_logger
from dlt_ops.redact import redact

log = get_logger(__name__)

TABLE_NAME = "_dlt_backfills"
ERROR_MAX = 500


class ChunkStatus(StrEnum):
    """Chunk statuses (reference vocabulary)."""

    pending = "pending"
    claimed = "claimed"
    running = "running"
    completed = "completed"
    failed = "failed"


_T, _B, _TS = ColumnType.TEXT, ColumnType.BIGINT, ColumnType.TIMESTAMPTZ
BACKFILLS_TABLE = TableSpec(
    TABLE_NAME,
    (
        Column("pipeline_name", _T, nullable=False),
        Column("source_section", _T, nullable=False),
        Column("resource_name", _T),
        Column("backfill_id", _T, nullable=False),
        Column("chunk_id", _T, nullable=False),
        Column("chunk_from", _TS, nullable=False),
        Column("chunk_to", _TS, nullable=False),
        Column("backfill_from", _TS, nullable=False),
        Column("backfill_to", _TS, nullable=False),
        Column("chunk_size", _T, nullable=False),
        Column("status", _T, nullable=False),
        Column("claimed_by", _T),
        Column("claimed_at", _TS),
        Column("started_at", _TS),
        Column("completed_at", _TS),
        Column("records_loaded", _B),
        Column("run_id", _T, nullable=False),
        # beyond the reference: leases, attempts and the last failure
        Column("lease_expires_at", _TS),
        Column("heartbeat_at", _TS),
        Column("attempts", _B, nullable=False),
        Column("last_error", _T),
    ),
    unique=("backfill_id", "chunk_id"),
    indexes=(("source_section", "backfill_id"),),
)
COLUMNS = tuple(c.name for c in BACKFILLS_TABLE.columns)
_SEEDED = (
    "pipeline_name, source_section, resource_name, backfill_id, chunk_id, chunk_from, chunk_to, "
    "backfill_from, backfill_to, chunk_size, status, run_id, attempts"
)
_KEY = "backfill_id = ? AND chunk_id = ?"

SEED = Statement(
    f"INSERT INTO {{{TABLE_NAME}}} ({_SEEDED}) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? "
    f"WHERE NOT EXISTS (SELECT 1 FROM {{{TABLE_NAME}}} WHERE {_KEY})"
)
SELECT_PLAN = Statement(
    f"SELECT {', '.join(COLUMNS)} FROM {{{TABLE_NAME}}} WHERE backfill_id = ? ORDER BY chunk_id"
)
SELECT_ALL = Statement(
    f"SELECT {', '.join(COLUMNS)} FROM {{{TABLE_NAME}}} ORDER BY backfill_from, backfill_id, "
    "chunk_id"
)
CLAIM = Statement(
    f"UPDATE {{{TABLE_NAME}}} SET status = ?, claimed_by = ?, claimed_at = ?, heartbeat_at = ?, "
    "lease_expires_at = ?, attempts = attempts + 1, started_at = NULL, completed_at = NULL "
    f"WHERE {_KEY} AND (status IN (?, ?) OR (status IN (?, ?) AND "
    "(lease_expires_at < ? OR claimed_by = ?)))"
)
MARK_RUNNING = Statement(
    f"UPDATE {{{TABLE_NAME}}} SET status = ?, started_at = ?, heartbeat_at = ? "
    f"WHERE {_KEY} AND claimed_by = ? AND status = ?"
)
RENEW = Statement(
    f"UPDATE {{{TABLE_NAME}}} SET heartbeat_at = ?, lease_expires_at = ? "
    f"WHERE {_KEY} AND claimed_by = ? AND status IN (?, ?)"
)
MARK_COMPLETED = Statement(
    f"UPDATE {{{TABLE_NAME}}} SET status = ?, completed_at = ?, heartbeat_at = ?, "
    "records_loaded = ?, lease_expires_at = NULL, last_error = NULL "
    f"WHERE {_KEY} AND claimed_by = ? AND status = ?"
)
MARK_FAILED = Statement(
    f"UPDATE {{{TABLE_NAME}}} SET status = ?, completed_at = ?, last_error = ?, "
    f"lease_expires_at = NULL WHERE {_KEY} AND claimed_by = ? AND status IN (?, ?)"
)


def _utc(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    return value


@dataclass(frozen=True)
class ChunkRow:
    """One ``_dlt_backfills`` row."""

    pipeline_name: str
    source_section: str
    resource_name: str | None
    backfill_id: str
    chunk_id: str
    chunk_from: datetime
    chunk_to: datetime
    backfill_from: datetime
    backfill_to: datetime
    chunk_size: str
    status: str
    claimed_by: str | None
    claimed_at: datetime | None
    started_at: datetime | None
    completed_at: datetime | None
    records_loaded: int | None
    run_id: str
    lease_expires_at: datetime | None
    heartbeat_at: datetime | None
    attempts: int
    last_error: str | None

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> ChunkRow:
        """Build from a row selected in ``COLUMNS`` order (timestamps normalised to UTC)."""
        values = {k: _utc(v) for k, v in zip(COLUMNS, row, strict=True)}
        for key in ("records_loaded", "attempts"):
            if values[key] is not None:
                values[key] = int(values[key])
        return cls(**values)

    def lease_expired(self, now: datetime) -> bool:
        """A ``claimed``/``running`` row whose holder stopped renewing its lease."""
        return (
            self.status in (ChunkStatus.claimed, ChunkStatus.running)
            and self.lease_expires_at is not None
            and self.lease_expires_at < now
        )

    def as_json(self) -> dict[str, Any]:
        """JSON-ready dict, timestamps as ISO-8601."""
        return {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in vars(self).items()}


@dataclass(frozen=True)
class Claim:
    """The outcome of a claim: whether we won, and the dead attempt we took it from."""

    won: bool
    reclaimed: ChunkRow | None = None
    reason: str | None = None

    def __bool__(self) -> bool:
        return self.won


class BackfillState:
    """Typed operations on ``_dlt_backfills`` for one worker token, through one session."""

    def __init__(self, session: DestinationSession, token: str) -> None:
        self.session = session
        self.token = token

    # -- plumbing --------------------------------------------------------------------------

    def _execute(self, what: str, stmt: Statement, *params: Any) -> int:
        try:
            return self.session.execute(stmt, *params)
        except DestinationError as exc:
            raise BackfillStateError(
                f"could not {what} in {TABLE_NAME}: {exc}. Nothing was skipped; re-run the "
                "same backfill once the destination is healthy."
            ) from exc

    def _query(self, stmt: Statement, *params: Any) -> list[ChunkRow]:
        try:
            return [ChunkRow.from_row(r) for r in self.session.query(stmt, *params)]
        except DestinationError as exc:
            raise BackfillStateError(f"could not read {TABLE_NAME}: {exc}") from exc

    def exists(self) -> bool:
        """Whether the table exists (read-only commands never create it)."""
        try:
            return self.session.fetch_columns(TABLE_NAME) is not None
        except DestinationError as exc:
            raise BackfillStateError(f"could not inspect {TABLE_NAME}: {exc}") from exc

    def ensure_table(self) -> None:
        """Create the dataset and table if absent (idempotent, race-safe per adapter)."""
        try:
            self.session.ensure_table(BACKFILLS_TABLE)
        except DestinationError as exc:
            raise BackfillStateError(f"could not create {TABLE_NAME}: {exc}") from exc

    # -- reads -------------------------------------------------------------------------------

    def rows(self, backfill_id: str) -> dict[str, ChunkRow]:
        """The plan's rows by ``chunk_id`` (the first row wins where duplicates exist)."""
        out: dict[str, ChunkRow] = {}
        for row in self._query(SELECT_PLAN, backfill_id):
            out.setdefault(row.chunk_id, row)
        return out

    def all_rows(self) -> list[ChunkRow]:
        """Every row of every backfill in this dataset."""
        return self._query(SELECT_ALL)

    # -- seeding -------------------------------------------------------------------------------

    def seed(self, plan: BackfillPlan, pipeline_name: str) -> dict[str, ChunkRow]:
        """Insert missing chunk rows as ``pending`` (idempotent, safe against racing seeders).

        Verifies that stored rows were seeded from the same inputs first; returns the rows.
        """
        self.ensure_table()
        existing = self.rows(plan.backfill_id)
        self.verify(plan, existing.values())
        for chunk in plan.chunks:
            if chunk.chunk_id in existing:
                continue
            try:
                self.session.execute(SEED, *self._seed_values(plan, chunk, pipeline_name))
            except DestinationError as exc:
                # a concurrent seeder inserted it first: the unique constraint said so
                if chunk.chunk_id not in self.rows(plan.backfill_id):
                    raise BackfillStateError(
                        f"could not seed chunk {chunk.chunk_id} of backfill {plan.backfill_id} "
                        f"in {TABLE_NAME}: {exc}"
                    ) from exc
                log.debug("backfill.seed_raced", chunk_id=chunk.chunk_id)
        rows = self.rows(plan.backfill_id)
        missing = [c.chunk_id for c in plan.chunks if c.chunk_id not in rows]
        if missing:
            raise BackfillStateError(
                f"seeding backfill {plan.backfill_id} left chunk(s) {', '.join(missing[:5])} "
                f"without a row in {TABLE_NAME}; the destination dropped writes."
            )
        self.verify(plan, rows.values())
        return rows

    @staticmethod
    def _seed_values(plan: BackfillPlan, chunk: Chunk, pipeline_name: str) -> tuple[Any, ...]:
        w = plan.window
        return (
            pipeline_name, plan.source, plan.resource_name, plan.backfill_id, chunk.chunk_id,
            chunk.start, chunk.end, w.start, w.end, plan.chunk_label, ChunkStatus.pending.value,
            chunk.run_id, 0, plan.backfill_id, chunk.chunk_id,
        )  # fmt: skip

    @staticmethod
    def verify(plan: BackfillPlan, rows: Iterable[ChunkRow]) -> None:
        """Refuse to resume a backfill whose stored inputs differ from ``plan``'s."""
        want = (plan.source, plan.window.start, plan.window.end, plan.chunk_label)
        for row in rows:
            got = (row.source_section, row.backfill_from, row.backfill_to, row.chunk_size)
            if got != want or (row.resource_name or None) != plan.resource_name:
                raise BackfillStateError(
                    f"backfill {plan.backfill_id} exists with different inputs: stored "
                    f"({got[0]}, {got[1].isoformat()}, {got[2].isoformat()}, {got[3]}, "
                    f"resources={row.resource_name}), got ({want[0]}, {want[1].isoformat()}, "
                    f"{want[2].isoformat()}, {want[3]}, resources={plan.resource_name}). "
                    f"Inspect it with `dlt-ops backfill show {plan.backfill_id}`."
                )

    # -- transitions ---------------------------------------------------------------------------

    def claim(
        self, backfill_id: str, chunk_id: str, lease: timedelta, *, known: ChunkRow | None = None
    ) -> Claim:
        """Compare-and-swap ``pending|failed|dead holder → claimed``; truthy when we won.

        A holder is dead when its lease expired, or at once when it ran on this host and its
        pid is gone (SIGKILL, OOM): the claim then says why, so the killed attempt's ledger row
        can be closed with that reason. ``known`` is the chunk's row as the caller just read
        it (spares reading it again here); the swap itself decides either way.
        """
        now = utcnow()
        ours = known is not None and (known.backfill_id, known.chunk_id) == (backfill_id, chunk_id)
        before = known if ours else self.rows(backfill_id).get(chunk_id)
        reason, dead_token = None, None
        if before is not None and before.status in (ChunkStatus.claimed, ChunkStatus.running):
            if before.lease_expired(now):
                reason = f"lease expired at {before.lease_expires_at:%Y-%m-%d %H:%M:%S} UTC"
            else:
                gone = holder_gone(before.claimed_by)
                if gone is not None:
                    reason, dead_token = gone, before.claimed_by
            if reason is not None:
                reason = f"holder {before.claimed_by} abandoned the chunk: {reason}"
        s = ChunkStatus
        affected = self._execute(
            f"claim chunk {chunk_id}", CLAIM, s.claimed.value, self.token, now, now, now + lease,
            backfill_id, chunk_id, s.pending.value, s.failed.value, s.claimed.value,
            s.running.value, now, dead_token or "",
        )  # fmt: skip
        if affected > 1:  # only where the engine cannot enforce (backfill_id, chunk_id) unique
            log.warning("backfill.duplicate_rows", chunk_id=chunk_id, rows=affected)
        if affected >= 1 and reason is not None:
            log.warning("backfill.chunk_reclaimed", chunk_id=chunk_id, reason=reason)
        return Claim(affected >= 1, before if reason is not None else None, reason)

    def _transition(self, what: str, stmt: Statement, *params: Any) -> None:
        if self._execute(what, stmt, *params) == 0:
            raise LeaseLostError(
                f"could not {what}: this worker ({self.token}) no longer holds the chunk; its "
                "lease expired and another worker reclaimed it."
            )

    def mark_running(self, backfill_id: str, chunk_id: str) -> None:
        """``claimed → running``."""
        now = utcnow()
        self._transition(
            f"mark chunk {chunk_id} running", MARK_RUNNING, ChunkStatus.running.value, now, now,
            backfill_id, chunk_id, self.token, ChunkStatus.claimed.value,
        )  # fmt: skip

    def renew(self, backfill_id: str, chunk_id: str, lease: timedelta) -> bool:
        """Extend our lease; ``False`` when we no longer hold the chunk."""
        now = utcnow()
        return (
            self._execute(
                f"renew the lease on chunk {chunk_id}",
                RENEW,
                now,
                now + lease,
                backfill_id,
                chunk_id,
                self.token,
                ChunkStatus.claimed.value,
                ChunkStatus.running.value,
            )  # fmt: skip
            >= 1
        )

    def mark_completed(self, backfill_id: str, chunk_id: str, records: int | None) -> None:
        """``running → completed``."""
        now = utcnow()
        self._transition(
            f"mark chunk {chunk_id} completed", MARK_COMPLETED, ChunkStatus.completed.value, now,
            now, records, backfill_id, chunk_id, self.token, ChunkStatus.running.value,
        )  # fmt: skip

    def mark_failed(self, backfill_id: str, chunk_id: str, error: str) -> bool:
        """``claimed|running → failed``; ``False`` when we no longer held it."""
        return (
            self._execute(
                f"mark chunk {chunk_id} failed",
                MARK_FAILED,
                ChunkStatus.failed.value,
                utcnow(),
                redact(error)[:ERROR_MAX],
                backfill_id,
                chunk_id,
                self.token,
                ChunkStatus.claimed.value,
                ChunkStatus.running.value,
            )  # fmt: skip
            >= 1
        )
