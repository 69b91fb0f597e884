"""The ``destination`` ledger sink: ``_dlt_ops_runs`` in the run's own destination and dataset."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from datetime import datetime

from dlt_ops.adapters import ColumnInfo, DestinationSession, Statement
from dlt_ops.ledger.model import ALL_KEYS, RUNS_TABLE, RUNS_TABLE_NAME, RunRecord, RunStatus
from dlt_ops.ledger.sinks import LedgerQuery, LedgerSinkContext
from dlt_ops.log import get_logger

log = get_logger(__name__)

_COLS = ", ".join(ALL_KEYS)
INSERT_RUN = Statement(
    f"INSERT INTO {{{RUNS_TABLE_NAME}}} ({_COLS}) VALUES ({', '.join('?' for _ in ALL_KEYS)})"
)
# one attempt's row is (run_id, source_section, started_at): a backfill chunk's attempts share
# its run_id, and one attempt never touches another's row (docs/runs-ledger.md)
HEARTBEAT_RUN = Statement(
    f"UPDATE {{{RUNS_TABLE_NAME}}} SET heartbeat_at = ? "
    "WHERE run_id = ? AND source_section = ? AND started_at = ? AND status = ?"
)
FINISH_RUN = Statement(
    f"UPDATE {{{RUNS_TABLE_NAME}}} SET status = ?, completed_at = ?, heartbeat_at = ?, "
    "dlt_run_id = ?, records_extracted = ?, records_loaded = ?, error_summary = ?, note = ?, "
    "resumed_from = ? "
    "WHERE run_id = ? AND source_section = ? AND started_at = ? AND status = ?"
)
PRUNE_COUNT = Statement(f"SELECT COUNT(*) FROM {{{RUNS_TABLE_NAME}}} WHERE started_at < ?")
PRUNE_DELETE = Statement(f"DELETE FROM {{{RUNS_TABLE_NAME}}} WHERE started_at < ?")


def select_list(present: Iterable[ColumnInfo] | None = None) -> str:
    """The ``SELECT`` list in ``ALL_KEYS`` order; a column an older version's table lacks
    (``present`` given) reads as ``NULL`` until the next write adds it."""
    if present is None:
        return _COLS
    return _select_list_of(frozenset(c.name.lower() for c in present))


@functools.lru_cache(maxsize=16)
def _select_list_of(have: frozenset[str]) -> str:
    """:func:`select_list` for a table holding the columns ``have`` (built once per shape: a
    reader over a thousand ledger files asks for the same one a thousand times)."""
    return ", ".join(k if k in have else f"NULL AS {k}" for k in ALL_KEYS)


def select_run_by_id(present: Iterable[ColumnInfo] | None = None) -> Statement:
    """Rows whose run id is the reference or starts with it, newest first."""
    return Statement(
        f"SELECT {select_list(present)} FROM {{{RUNS_TABLE_NAME}}} "
        "WHERE run_id = ? OR substr(run_id, 1, ?) = ? ORDER BY started_at DESC"
    )


def _filters(query: LedgerQuery, where: list[str], params: list[object]) -> None:
    """``query``'s resource, status and since filters, appended to ``where``/``params``."""
    for column, value in (("resource_name", query.resource), ("status", query.status)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    if query.since is not None:
        where.append("started_at >= ?")
        params.append(query.since)


#: sources per statement of :func:`select_runs_many` (engines cap bound parameters)
MANY_CHUNK = 400


def select_runs_many(
    sources: Sequence[str], query: LedgerQuery, present: Iterable[ColumnInfo] | None = None
) -> tuple[Statement, tuple[object, ...]]:
    """One SELECT for the newest ``query.limit`` runs of each of ``sources`` (a dataset many
    sources share: one round-trip instead of one per source), by source, newest first."""
    where: list[str] = [f"source_section IN ({', '.join('?' for _ in sources)})"]
    params: list[object] = list(sources)
    _filters(query, where, params)
    limit = int(query.limit)  # an int, validated positive by the caller, not user text
    text = (
        f"SELECT {_COLS} FROM (SELECT {select_list(present)}, ROW_NUMBER() OVER "
        "(PARTITION BY source_section ORDER BY started_at DESC) AS dltops_rank "
        f"FROM {{{RUNS_TABLE_NAME}}} WHERE {' AND '.join(where)}) ranked "
        f"WHERE dltops_rank <= {limit} ORDER BY source_section, started_at DESC"
    )
    return Statement(text), tuple(params)


def select_runs(
    query: LedgerQuery, present: Iterable[ColumnInfo] | None = None
) -> tuple[Statement, tuple[object, ...]]:
    """The newest-first SELECT for ``query`` and its parameters."""
    where: list[str] = ["source_section = ?"]
    params: list[object] = [query.source]
    _filters(query, where, params)
    limit = int(query.limit)  # an int, validated positive by the caller, not user text
    text = (
        f"SELECT {select_list(present)} FROM {{{RUNS_TABLE_NAME}}} WHERE {' AND '.join(where)} "
        f"ORDER BY started_at DESC LIMIT {limit}"
    )
    return Statement(text), tuple(params)


class DestinationLedgerSink:
    """Writes one row per run through the destination adapter (full tier only)."""

    target = RUNS_TABLE_NAME

    def __init__(self, context: LedgerSinkContext) -> None:
        self.context = context

    def _skip(self) -> bool:
        if self.context.full_tier:
            return False
        log.info(
            f"runs ledger skipped: destination '{self.context.engine}' has no "
            "DestinationAdapter (core mode)"
        )
        return True

    def start(self, run: RunRecord) -> None:
        """Ensure the table, insert the ``running`` row."""
        if self._skip():
            return
        session = self.context.open_session()
        session.ensure_table(RUNS_TABLE)
        session.execute(INSERT_RUN, *run.values())

    def heartbeat(self, run: RunRecord) -> None:
        """Renew ``heartbeat_at`` of the running row."""
        if self.context.full_tier:
            self.context.open_session().execute(
                HEARTBEAT_RUN, run.heartbeat_at, run.run_id, run.source_section, run.started_at,
                RunStatus.running,
            )  # fmt: skip

    def finish(self, run: RunRecord) -> None:
        """Update the running row to its terminal status (never a non-running row)."""
        if self._skip():
            return
        session = self.context.open_session()
        session.ensure_table(RUNS_TABLE)
        updated = session.execute(
            FINISH_RUN,
            run.status,
            run.completed_at,
            run.heartbeat_at,
            run.dlt_run_id,
            run.records_extracted,
            run.records_loaded,
            run.error_summary,
            run.note,
            run.resumed_from,
            run.run_id,
            run.source_section,
            run.started_at,
            RunStatus.running,
        )
        if updated == 0:
            log.error(
                f"Terminal {RUNS_TABLE_NAME} write for run {run.run_id} matched no start row "
                "(run-start was never recorded); this run has no ledger entry (non-fatal)"
            )

    def read_run(self, ref: str) -> list[RunRecord]:
        """Ledger rows whose run id is ``ref`` or starts with it (a retried backfill chunk has
        several rows with one id), newest first."""
        session = self.context.open_session()
        present = session.fetch_columns(RUNS_TABLE_NAME)
        if present is None:
            return []
        rows = session.query(select_run_by_id(present), ref, len(ref), ref)
        return [RunRecord.from_row(row) for row in rows]

    def read_runs(self, query: LedgerQuery) -> list[RunRecord] | None:
        """Newest-first runs; ``None`` when the table does not exist."""
        session = self.context.open_session()
        found = session.remember(("read_runs", query), lambda: _read_runs(session, query))
        return None if found is None else list(found)

    def read_runs_many(
        self, sources: Sequence[str], query: LedgerQuery
    ) -> dict[str, list[RunRecord]] | None:
        """:meth:`read_runs` for many sources of this ledger at once (``query.source`` is
        ignored): a few statements per dataset, however many sources share it."""
        session = self.context.open_session()
        found = session.remember(("read_runs_many", tuple(sources), query),
                                 lambda: _read_runs_many(session, sources, query))  # fmt: skip
        return None if found is None else {source: list(runs) for source, runs in found.items()}

    def prune(self, older_than: datetime, *, dry_run: bool) -> int:
        """Count or delete rows started before ``older_than`` (a run that old is over)."""
        session = self.context.open_session()
        if session.fetch_columns(RUNS_TABLE_NAME) is None:
            return 0
        if dry_run:
            return int(session.query(PRUNE_COUNT, older_than)[0][0])
        return session.execute(PRUNE_DELETE, older_than)


# a snapshot session keeps what these built while its database is unchanged (remember)
def _read_runs(session: DestinationSession, query: LedgerQuery) -> list[RunRecord] | None:
    present = session.fetch_columns(RUNS_TABLE_NAME)
    if present is None:
        return None
    stmt, params = select_runs(query, present)
    return [RunRecord.from_row(row) for row in session.query(stmt, *params)]


def _read_runs_many(
    session: DestinationSession, sources: Sequence[str], query: LedgerQuery
) -> dict[str, list[RunRecord]] | None:
    present = session.fetch_columns(RUNS_TABLE_NAME)
    if present is None:
        return None
    found: dict[str, list[RunRecord]] = {source: [] for source in sources}
    for first in range(0, len(sources), MANY_CHUNK):
        stmt, params = select_runs_many(sources[first : first + MANY_CHUNK], query, present)
        for row in session.query(stmt, *params):
            run = RunRecord.from_row(row)
            found[run.source_section].append(run)
    return found
