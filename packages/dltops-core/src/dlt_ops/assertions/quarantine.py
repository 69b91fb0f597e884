"""``_dlt_rejected``: quarantined rows, one JSON payload per row and tripped assertion.

Written through the run's :class:`~dlt_ops.adapters.DestinationSession` (values bound, never
formatted), after extract and before normalize. Unlike the runs ledger this write is a gate:
if it fails, loading the remaining rows would silently lose the rejected ones, so the run
aborts with :class:`~dlt_ops.errors.QuarantineWriteError`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from dlt_ops.adapters import Column, ColumnType, Statement, TableSpec
from dlt_ops.errors import QuarantineWriteError
from dlt_ops.log import get_logger

if TYPE_CHECKING:
    from dlt_ops.adapters import DestinationSession

log = get_logger(__name__)

REJECTED_TABLE_NAME = "_dlt_rejected"
_T, _TS = ColumnType.TEXT, ColumnType.TIMESTAMPTZ
#: The reference's columns, in its order.
REJECTED_TABLE = TableSpec(
    REJECTED_TABLE_NAME,
    (
        Column("pipeline_name", _T, nullable=False),
        Column("source_section", _T, nullable=False),
        Column("resource_name", _T, nullable=False),
        Column("run_id", _T, nullable=False),
        Column("assertion_type", _T, nullable=False),
        Column("assertion_params", _T, nullable=False),
        Column("violation", _T, nullable=False),
        Column("rejected_at", _TS, nullable=False),
        Column("row_json", _T, nullable=False),
    ),
    indexes=(("run_id",),),
)
_COLS = ", ".join(c.name for c in REJECTED_TABLE.columns)
CHUNK_ROWS = 200


def _insert(rows: int) -> Statement:
    one = "(" + ", ".join("?" for _ in REJECTED_TABLE.columns) + ")"
    return Statement(
        f"INSERT INTO {{{REJECTED_TABLE_NAME}}} ({_COLS}) VALUES {', '.join([one] * rows)}"
    )


def row_json(row: Mapping[str, Any]) -> str:
    """The payload column: the row as JSON (non-JSON values as strings)."""
    return json.dumps(dict(row), default=str)


def params_json(params: Mapping[str, Any]) -> str:
    """The params column, stable across runs."""
    return json.dumps(dict(params), default=str, sort_keys=True)


@dataclass(frozen=True)
class Rejected:
    """One quarantined row for one tripped assertion (payloads already serialised)."""

    resource: str
    assertion_type: str
    assertion_params: str
    violation: str
    row_json: str


class QuarantineWriter:
    """Writes buffered rejections for one run."""

    def __init__(
        self,
        open_session: Callable[[], DestinationSession],
        *,
        pipeline_name: str,
        source: str,
        run_id: str,
    ) -> None:
        self.open_session = open_session
        self.pipeline_name, self.source, self.run_id = pipeline_name, source, run_id

    def write(self, rejected: Sequence[Rejected]) -> int:
        """Insert every rejection in chunks of ``CHUNK_ROWS``; raise ``QuarantineWriteError``."""
        if not rejected:
            return 0
        at = datetime.now(UTC)
        try:
            session = self.open_session()
            session.ensure_table(REJECTED_TABLE)
            for start in range(0, len(rejected), CHUNK_ROWS):
                chunk = rejected[start : start + CHUNK_ROWS]
                params: list[Any] = []
                for r in chunk:
                    params += [self.pipeline_name, self.source, r.resource, self.run_id,
                               r.assertion_type, r.assertion_params, r.violation, at,
                               r.row_json]  # fmt: skip
                session.execute(_insert(len(chunk)), *params)
        except Exception as exc:
            raise QuarantineWriteError(
                f"failed to write {len(rejected)} quarantined row(s) of source '{self.source}' "
                f"to {REJECTED_TABLE_NAME}: {type(exc).__name__}: {exc}. Loading the other rows "
                f"without them would be silent data loss, so the run aborts before load; fix "
                f"the destination and re-run."
            ) from exc
        log.info("assertions.quarantined", rows=len(rejected), table=REJECTED_TABLE_NAME)
        return len(rejected)
