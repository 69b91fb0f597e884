"""0.1's tables in the destination, brought to this version's columns in place.

0.1 wrote ``_dlt_ops_runs``, ``_dlt_backfills``, ``_dlt_custom_checkpoints`` and
``_dlt_rejected`` with the same names, ids and meanings this version uses (run ids, backfill
and chunk ids are the same hashes), only with fewer columns. Adopting them adds the missing
columns (nullable) and fills the two a 0.1 row cannot leave empty: a chunk's ``attempts``
(0 pending, else 1) and, for a chunk a 0.1 process left ``claimed``/``running``, a lease that
has already expired so the next backfill can take it over. Runs 0.1 wrote are marked with its
version. No row is deleted or rewritten otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from dlt_ops.adapters import Statement, TableSpec
from dlt_ops.migrate.model import Change

if TYPE_CHECKING:
    from dlt_ops.adapters import DestinationSession

VERSION_0_1 = "0.1.0"


@dataclass(frozen=True)
class Fixup:
    """A value a 0.1 row lacks: ``UPDATE <table> SET <assign> WHERE <where>``, run after the
    column exists; ``where`` matches only rows 0.1 wrote, so running it twice changes nothing."""

    table: str
    column: str
    assign: str
    where: str
    says: str

    def update(self) -> Statement:
        return Statement(f"UPDATE {{{self.table}}} SET {self.assign} WHERE {self.where}")

    def count(self) -> Statement:
        return Statement(f"SELECT COUNT(*) FROM {{{self.table}}} WHERE {self.where}")


FIXUPS = (
    Fixup("_dlt_backfills", "attempts", "attempts = CASE WHEN status = 'pending' THEN 0 ELSE 1 END",
          "attempts IS NULL", "set attempts (0 pending, else 1)"),
    Fixup("_dlt_backfills", "lease_expires_at", "lease_expires_at = claimed_at",
          "status IN ('claimed', 'running') AND lease_expires_at IS NULL",
          "expire the lease of chunks a 0.1 process left claimed or running"),
    Fixup("_dlt_ops_runs", "dltops_version", f"dltops_version = '{VERSION_0_1}'",
          "dltops_version IS NULL", f"mark as written by dlt-ops {VERSION_0_1}"),
)  # fmt: skip


def adopted_tables() -> tuple[TableSpec, ...]:
    """The specs of the tables 0.1 wrote, as this version declares them."""
    from dlt_ops.assertions.quarantine import REJECTED_TABLE
    from dlt_ops.backfill.state import BACKFILLS_TABLE
    from dlt_ops.checkpoints.table import DEFAULT_TABLE, table_spec
    from dlt_ops.ledger.model import RUNS_TABLE

    return (RUNS_TABLE, BACKFILLS_TABLE, table_spec(DEFAULT_TABLE), REJECTED_TABLE)


def missing_columns(session: DestinationSession, spec: TableSpec) -> list[str] | None:
    """Columns of ``spec`` the existing table lacks; ``None`` when there is no such table."""
    present = session.fetch_columns(spec.name)
    if present is None:
        return None
    have = {c.name.lower() for c in present}
    return [c.name for c in spec.columns if c.name.lower() not in have]


def table_changes(session: DestinationSession, where: str) -> list[Change]:
    """What adopting ``session``'s dataset would do: columns to add, 0.1 rows to complete."""
    changes = []
    for spec in adopted_tables():
        missing = missing_columns(session, spec)
        if missing is None:
            continue
        subject = f"{where}.{spec.name}"
        if missing:
            changes.append(
                Change("table", subject, f"add columns {', '.join(missing)} (rows kept)")
            )
        for fix in (f for f in FIXUPS if f.table == spec.name):
            rows = None if fix.column in missing else int(session.query(fix.count())[0][0])
            if rows is None or rows:
                count = "its 0.1 rows" if rows is None else f"{rows} row(s)"
                changes.append(Change("table", subject, f"{fix.says}: {count}"))
    return changes


def adopt(session: DestinationSession) -> list[str]:
    """Add the missing columns of every adopted table, then complete the 0.1 rows; the names
    of the tables that existed."""
    touched = []
    for spec in adopted_tables():
        if session.fetch_columns(spec.name) is None:
            continue
        session.adapter.evolve_table(session.client, session.dataset, spec)
        for fix in (f for f in FIXUPS if f.table == spec.name):
            session.execute(fix.update())
        touched.append(spec.name)
    return touched
