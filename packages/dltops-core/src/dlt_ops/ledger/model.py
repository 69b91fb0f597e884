"""The runs ledger's data model: ``_dlt_ops_runs`` columns, statuses and one run's record.

The first 15 columns are seed 000's contract, in its order and with its meanings; the rest are
additive (SPEC §4.2): who ran it, its heartbeat, its window and the versions involved.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from dlt_ops.adapters import Column, ColumnType, TableSpec
from dlt_ops.errors import DltOpsError
from dlt_ops.redact import redact

RUNS_TABLE_NAME = "_dlt_ops_runs"
ERROR_SUMMARY_MAX = 500


class RunStatus(StrEnum):
    """Ledger statuses; ``skipped`` is reserved vocabulary (nothing writes it yet)."""

    running = "running"
    completed = "completed"
    failed = "failed"
    skipped = "skipped"


TERMINAL = frozenset({RunStatus.completed, RunStatus.failed, RunStatus.skipped})

_T, _B, _TS = ColumnType.TEXT, ColumnType.BIGINT, ColumnType.TIMESTAMPTZ

#: Seed 000's 15 columns, in order.
SEED_COLUMNS: tuple[Column, ...] = (
    Column("pipeline_name", _T, nullable=False),
    Column("source_section", _T, nullable=False),
    Column("resource_name", _T),
    Column("destination", _T, nullable=False),
    Column("dataset", _T, nullable=False),
    Column("run_id", _T, nullable=False),
    Column("dlt_run_id", _T),
    Column("backfill_id", _T),
    Column("trigger_source", _T, nullable=False),
    Column("started_at", _TS, nullable=False),
    Column("completed_at", _TS),
    Column("status", _T, nullable=False),
    Column("records_extracted", _B),
    Column("records_loaded", _B),
    Column("error_summary", _T),
)
#: SPEC §4.2's additive columns.
EXTRA_COLUMNS: tuple[Column, ...] = (
    Column("host", _T),
    Column("pid", _B),
    Column("heartbeat_at", _TS),
    Column("window_from", _TS),
    Column("window_to", _TS),
    Column("dltops_version", _T),
    Column("dlt_version", _T),
    # added later: an older table gains them on the next write (TableSpec.evolving)
    Column("orchestrator_run_id", _T),
    Column("orchestrator_try", _B),
    Column("queued_at", _TS),
    Column("note", _T),
    Column("resumed_from", _T),
)
RUNS_TABLE = TableSpec(
    RUNS_TABLE_NAME,
    SEED_COLUMNS + EXTRA_COLUMNS,
    indexes=(("source_section", "started_at"),),
    evolving=True,
)
SEED_KEYS: tuple[str, ...] = tuple(c.name for c in SEED_COLUMNS)
ALL_KEYS: tuple[str, ...] = tuple(c.name for c in RUNS_TABLE.columns)


@dataclass(frozen=True)
class RunRecord:
    """One ledger row."""

    pipeline_name: str
    source_section: str
    resource_name: str | None
    destination: str
    dataset: str
    run_id: str
    dlt_run_id: str | None
    backfill_id: str | None
    trigger_source: str
    started_at: datetime
    completed_at: datetime | None
    status: str
    records_extracted: int | None
    records_loaded: int | None
    error_summary: str | None
    host: str | None = None
    pid: int | None = None
    heartbeat_at: datetime | None = None
    window_from: datetime | None = None
    window_to: datetime | None = None
    dltops_version: str | None = None
    dlt_version: str | None = None
    #: the orchestrator's own run (Airflow ``dag_id/run_id``, a Dagster run id) and try number
    orchestrator_run_id: str | None = None
    orchestrator_try: int | None = None
    #: when the command began waiting for the run lease (``started_at``: when it got it)
    queued_at: datetime | None = None
    #: a one-line remark on how the row came to be (e.g. closed by another run)
    note: str | None = None
    #: checkpointed resources that resumed, and the span each skipped (JSON, see
    #: ``dlt_ops.ledger.resumes``)
    resumed_from: str | None = None

    def values(self) -> tuple[Any, ...]:
        """Column values in table order."""
        return tuple(getattr(self, k) for k in ALL_KEYS)

    def replace(self, **changes: Any) -> RunRecord:
        """A copy with ``changes`` applied."""
        return dataclasses.replace(self, **changes)

    def as_json(self, *, seed_only: bool = False) -> dict[str, Any]:
        """JSON-ready dict in column order, timestamps as ISO-8601."""
        keys = SEED_KEYS if seed_only else ALL_KEYS
        out: dict[str, Any] = {}
        for key in keys:
            value = getattr(self, key)
            out[key] = value.isoformat() if isinstance(value, datetime) else value
        return out

    @classmethod
    def from_row(cls, row: tuple[Any, ...]) -> RunRecord:
        """Build from a row selected in ``ALL_KEYS`` order (a listing of a thousand sources
        builds ten thousand: positionally, when the fields are in that order, as they are)."""
        if len(row) != len(ALL_KEYS):
            raise ValueError(f"a ledger row of {len(row)} values for {len(ALL_KEYS)} columns")
        values = list(row)
        for index in _INT_INDEXES:
            if values[index] is not None:
                values[index] = int(values[index])
        if _FIELDS_IN_COLUMN_ORDER:
            return cls(*values)
        return cls(**dict(zip(ALL_KEYS, values, strict=True)))


#: columns ``from_row`` makes ints of (a driver may hand back another integer type)
_INT_INDEXES = tuple(
    ALL_KEYS.index(k) for k in ("records_extracted", "records_loaded", "pid", "orchestrator_try")
)
_FIELDS_IN_COLUMN_ORDER = tuple(f.name for f in dataclasses.fields(RunRecord)) == ALL_KEYS


def root_cause(exc: BaseException) -> BaseException:
    """The exception that started ``exc``: dlt's wrappers (``PipelineStepFailed.exception``,
    a resource's extraction error raised ``from`` the source's own) are peeled off; an error
    of dlt-ops' own is kept, its message is written to be the cause."""
    current, seen = exc, {id(exc)}
    while not isinstance(current, DltOpsError):
        inner = getattr(current, "exception", None)
        nxt = inner if isinstance(inner, BaseException) else current.__cause__
        if nxt is None or id(nxt) in seen:
            break
        seen.add(id(nxt))
        current = nxt
    return current


def _where(exc: BaseException, root: BaseException) -> str:
    """``step extract, resource events, load_id 17...`` from the wrappers above ``root``."""
    parts: list[str] = []
    current: BaseException | None = exc
    while current is not None and current is not root:
        step, load_id = getattr(current, "step", None), getattr(current, "load_id", None)
        pipe = getattr(current, "pipe_name", None)
        if isinstance(step, str) and not any(p.startswith("step ") for p in parts):
            parts.append(f"step {step}")
        if isinstance(pipe, str):
            parts.append(f"resource {pipe}")
        if isinstance(load_id, str) and load_id and not any(p.startswith("load_id") for p in parts):
            parts.append(f"load_id {load_id}")
        inner = getattr(current, "exception", None)
        current = inner if isinstance(inner, BaseException) else current.__cause__
    order = ("step", "resource", "load_id")
    return ", ".join(sorted(parts, key=lambda p: order.index(p.split(" ", 1)[0])))


def summarize_error(exc: BaseException) -> str:
    """``<RootType>: <root message> (step …, resource …, load_id …)`` on one line: the cause
    first (not dlt's wrapper text), secrets redacted, at most 500 characters."""
    root = root_cause(exc)
    text = redact(" ".join(f"{type(root).__name__}: {root}".split()))
    where = _where(exc, root) if root is not exc else ""
    if not where:
        return text[:ERROR_SUMMARY_MAX]
    tail = f" ({redact(where)})"
    return text[: max(ERROR_SUMMARY_MAX - len(tail), 0)] + tail
