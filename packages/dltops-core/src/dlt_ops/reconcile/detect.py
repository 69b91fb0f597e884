"""Comparing the tables dlt created for a resource with what its model declares.

Additive, type and missing-column drift come from one look at the live columns; removal drift
from one aggregate query per table over the load-timestamp column. Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from dlt_ops.adapters import DestinationAdapter, DestinationSession, Statement
from dlt_ops.adapters.model import IDENTIFIER_RE, ColumnType
from dlt_ops.dlt_schema import DLT_PREFIX
from dlt_ops.reconcile.declared import DeclaredTable
from dlt_ops.reconcile.model import DriftFinding, DriftKind, RemovalSettings

#: live columns of one table: name → dlt data type (``None`` when dlt cannot map it back)
LiveColumns = Mapping[str, str | None]
#: how many rows a reproduce query returns at most
SAMPLE_LIMIT = 20


@dataclass(frozen=True)
class Scope:
    """One resource's tables and what its model declares for them."""

    source: str
    resource: str
    tables: list[str]
    declared: dict[str, DeclaredTable]
    ignored: frozenset[str]


def _declared_for(table: str, declared: dict[str, DeclaredTable]) -> DeclaredTable | None:
    """The declaration covering ``table``; a child of an untyped (open) table is open too."""
    if table in declared:
        return declared[table]
    for name, decl in declared.items():
        if "" in decl.open_prefixes and table.startswith(name + "__"):
            return decl
    return None


def _skip(column: str, ignored: frozenset[str]) -> bool:
    return column.startswith(DLT_PREFIX) or column in ignored


class Reproducer:
    """Renders the SQL that returns a finding's rows, in the destination's dialect."""

    def __init__(self, adapter: DestinationAdapter, dataset: str) -> None:
        self.adapter, self.dataset = adapter, dataset

    def _render(self, text: str) -> str | None:
        try:
            return self.adapter.render(Statement(text), self.dataset)
        except Exception:  # a name outside the grammar: no query rather than a wrong one
            return None

    def non_null(self, table: str, column: str) -> str | None:
        """Rows where ``column`` holds a value."""
        return self._render(
            f'SELECT * FROM {{{table}}} WHERE "{column}" IS NOT NULL LIMIT {SAMPLE_LIMIT}'
        )

    def null_since(self, table: str, column: str, ts: str, since: datetime) -> str | None:
        """Rows of the recent window where ``column`` is null, newest first."""
        type_names = getattr(self.adapter, "type_names", {})
        ts_type = type_names.get(ColumnType.TIMESTAMPTZ, "TIMESTAMP WITH TIME ZONE")
        literal = since.isoformat(sep=" ", timespec="seconds")
        return self._render(
            f"SELECT * FROM {{{table}}} WHERE \"{ts}\" >= CAST('{literal}' AS {ts_type}) "
            f'AND "{column}" IS NULL ORDER BY "{ts}" DESC LIMIT {SAMPLE_LIMIT}'
        )


def schema_drift(
    scope: Scope, live: Mapping[str, LiveColumns], reproduce: Reproducer
) -> tuple[list[DriftFinding], list[str]]:
    """Additive, type and missing-column findings over ``scope``'s tables, and notes."""
    findings: list[DriftFinding] = []
    notes: list[str] = []

    def add(table: str, column: str, kind: DriftKind, detail: str, sql: str | None) -> None:
        findings.append(
            DriftFinding(scope.source, scope.resource, table, column, kind, detail, sql)
        )

    for table in scope.tables:
        columns = live.get(table) or {}
        if not columns:
            notes.append(f"{scope.resource}: table {table} is not in the destination: skipped")
            continue
        decl = _declared_for(table, scope.declared)
        for column, live_type in columns.items():
            if _skip(column, scope.ignored):
                continue
            if decl is None or not decl.declares(column):
                add(table, column, DriftKind.additive, f"not declared ({live_type or '?'})",
                    reproduce.non_null(table, column))  # fmt: skip
                continue
            want = decl.columns.get(column)
            if want and live_type and want != live_type:
                add(table, column, DriftKind.type, f"declared {want}, destination has {live_type}",
                    reproduce.non_null(table, column))  # fmt: skip
        if decl is None:
            continue
        for column, want in decl.columns.items():
            if want and column not in columns and not _skip(column, scope.ignored):
                add(table, column, DriftKind.missing, f"declared {want}, not in the table", None)
    return findings, notes


def _alias(i: int, what: str) -> str:
    return f'"{what}_{i}"'


def removal_drift(
    scope: Scope,
    live: Mapping[str, LiveColumns],
    session: DestinationSession,
    ts_column: str,
    settings: RemovalSettings,
    now: datetime,
    reproduce: Reproducer,
) -> tuple[list[DriftFinding], list[str]]:
    """Declared columns whose non-null share collapsed: above the baseline threshold in the
    baseline window, below the recent threshold in the recent one. A table with no recent (or
    no baseline) rows never flags; an absent table is a note."""
    findings: list[DriftFinding] = []
    notes: list[str] = []
    recent_from = now - timedelta(hours=settings.recent_window_hours)
    baseline_from = recent_from - timedelta(days=settings.baseline_window_days)
    for table in scope.tables:
        columns = live.get(table) or {}
        if not columns:
            notes.append(f"{scope.resource}: removal skipped for {table}: table not found")
            continue
        if ts_column not in columns:
            continue  # child tables carry no load timestamp: nothing to window on
        decl = _declared_for(table, scope.declared)
        watched = [
            c for c in columns
            if decl is not None and c in decl.columns and not _skip(c, scope.ignored)
            and c != ts_column and IDENTIFIER_RE.fullmatch(c)
        ]  # fmt: skip
        if not watched:
            continue
        ts = f'"{ts_column}"'
        parts = [
            f"SUM(CASE WHEN {ts} >= ? THEN 1 ELSE 0 END)",
            f"SUM(CASE WHEN {ts} < ? THEN 1 ELSE 0 END)",
        ]
        params: list[Any] = [recent_from, recent_from]
        for i, column in enumerate(watched):
            parts.append(f'SUM(CASE WHEN {ts} >= ? AND "{column}" IS NOT NULL THEN 1 ELSE 0 END) '
                         f"AS {_alias(i, 'r')}")  # fmt: skip
            parts.append(f'SUM(CASE WHEN {ts} < ? AND "{column}" IS NOT NULL THEN 1 ELSE 0 END) '
                         f"AS {_alias(i, 'b')}")  # fmt: skip
            params += [recent_from, recent_from]
        stmt = Statement(f"SELECT {', '.join(parts)} FROM {{{table}}} WHERE {ts} >= ?")
        (row,) = session.query(stmt, *params, baseline_from)
        recent_n, baseline_n = int(row[0] or 0), int(row[1] or 0)
        if not recent_n or not baseline_n:
            continue  # an idle resource is not drift
        for i, column in enumerate(watched):
            recent = int(row[2 + 2 * i] or 0) / recent_n
            baseline = int(row[3 + 2 * i] or 0) / baseline_n
            if baseline > settings.baseline_threshold and recent < settings.recent_threshold:
                findings.append(DriftFinding(
                    scope.source, scope.resource, table, column, DriftKind.removal,
                    f"non-null {baseline:.0%} of {baseline_n} rows → {recent:.0%} of {recent_n}",
                    reproduce.null_since(table, column, ts_column, recent_from),
                ))  # fmt: skip
    return findings, notes


#: ``(tables) -> {table: live columns}``: how the service reads live columns (dlt's client)
LiveReader = Callable[[list[str]], dict[str, LiveColumns]]
