"""``_dlt_ops_drift``: one row per drifted column, so a drift is alerted once.

``first_seen_at`` is the first reconcile that saw it, ``last_seen_at`` the newest one,
``acknowledged_at`` is set by ``reconcile --ack``, and ``resolved_at`` by the first reconcile
that no longer finds it (a drift that comes back is new again).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime

from dlt_ops.adapters import Column, ColumnType, DestinationSession, Statement, TableSpec
from dlt_ops.reconcile.model import DriftFinding

DRIFT_TABLE_NAME = "_dlt_ops_drift"
_T, _TS = ColumnType.TEXT, ColumnType.TIMESTAMPTZ
DRIFT_TABLE = TableSpec(
    DRIFT_TABLE_NAME,
    (
        Column("source_section", _T, nullable=False),
        Column("pipeline_name", _T, nullable=False),
        Column("resource_name", _T, nullable=False),
        Column("table_name", _T, nullable=False),
        Column("column_name", _T, nullable=False),
        Column("kind", _T, nullable=False),
        Column("detail", _T),
        Column("first_seen_at", _TS, nullable=False),
        Column("last_seen_at", _TS, nullable=False),
        Column("acknowledged_at", _TS),
        Column("resolved_at", _TS),
    ),
    unique=("source_section", "table_name", "column_name", "kind"),
)
_D = f"{{{DRIFT_TABLE_NAME}}}"
SELECT = Statement(
    f"SELECT table_name, column_name, kind, first_seen_at, acknowledged_at, resolved_at "
    f"FROM {_D} WHERE source_section = ?"
)
#: every source's rows of a dataset at once (the fleet report)
SELECT_ALL = Statement(
    "SELECT source_section, table_name, column_name, kind, first_seen_at, acknowledged_at, "
    f"resolved_at FROM {_D}"
)
INSERT = Statement(
    f"INSERT INTO {_D} (source_section, pipeline_name, resource_name, table_name, column_name, "
    "kind, detail, first_seen_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_KEY = "source_section = ? AND table_name = ? AND column_name = ? AND kind = ?"
SEEN = Statement(f"UPDATE {_D} SET last_seen_at = ?, detail = ?, resolved_at = NULL WHERE {_KEY}")
#: a drift that had been resolved and is back: new again (first seen now, not acknowledged)
REOPEN = Statement(
    f"UPDATE {_D} SET first_seen_at = ?, last_seen_at = ?, detail = ?, acknowledged_at = NULL, "
    f"resolved_at = NULL WHERE {_KEY}"
)
RESOLVE = Statement(f"UPDATE {_D} SET resolved_at = ? WHERE {_KEY}")
ACK = Statement(f"UPDATE {_D} SET acknowledged_at = ? WHERE {_KEY} AND acknowledged_at IS NULL")
DELETE_SOURCE = Statement(f"DELETE FROM {_D} WHERE source_section = ?")
DELETE_RESOURCE = Statement(f"DELETE FROM {_D} WHERE source_section = ? AND resource_name = ?")

_Key = tuple[str, str, str, str]


class DriftState:
    """A source's stored drift rows, merged with what a reconcile found."""

    def __init__(self, session: DestinationSession, source: str, pipeline_name: str) -> None:
        self.session, self.source, self.pipeline_name = session, source, pipeline_name
        self.rows: dict[_Key, tuple[datetime, datetime | None, datetime | None]] = {}
        if session.fetch_columns(DRIFT_TABLE_NAME) is not None:  # reading creates nothing
            for table, column, kind, first, acked, resolved in session.query(SELECT, source):
                self.rows[(source, table, column, kind)] = (first, acked, resolved)

    def annotate(self, findings: Iterable[DriftFinding], now: datetime) -> list[DriftFinding]:
        """``findings`` with their stored first-seen and acknowledgement; ``new`` when no open
        row holds them."""
        out = []
        for f in findings:
            stored = self.rows.get(f.key)
            if stored is None or stored[2] is not None:  # never seen, or resolved and back
                out.append(replace(f, first_seen_at=now, last_seen_at=now, new=True))
            else:
                first, acked, _ = stored
                out.append(replace(f, first_seen_at=first, last_seen_at=now, acknowledged_at=acked))
        return out

    def save(self, findings: list[DriftFinding], examined: set[str], now: datetime) -> None:
        """Record ``findings``; rows of the ``examined`` tables that were not found again are
        resolved."""
        self.session.ensure_table(DRIFT_TABLE)
        found = {f.key for f in findings}
        for f in findings:
            key = f.key
            if key not in self.rows:
                self.session.execute(
                    INSERT, self.source, self.pipeline_name, f.resource, f.table, f.column,
                    str(f.kind), f.detail, now, now,
                )  # fmt: skip
            elif self.rows[key][2] is not None:
                self.session.execute(REOPEN, now, now, f.detail, *key)
            else:
                self.session.execute(SEEN, now, f.detail, *key)
        for key, (_, _, resolved) in self.rows.items():
            if key not in found and resolved is None and key[1] in examined:
                self.session.execute(RESOLVE, now, *key)

    def acknowledge(self, findings: list[DriftFinding], now: datetime) -> list[DriftFinding]:
        """Acknowledge ``findings`` (already saved); returns them acknowledged."""
        out = []
        for f in findings:
            if f.acknowledged_at is None:
                self.session.execute(ACK, now, *f.key)
                f = replace(f, acknowledged_at=now)
            out.append(f)
        return out
