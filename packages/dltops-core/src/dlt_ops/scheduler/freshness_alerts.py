"""Freshness alerts from the scheduler: once when a source misses its SLA or a due run, once
when it recovers, deduplicated across scheduler restarts.

``_dlt_ops_freshness_alerts`` in each source's dataset holds one row per open problem
(``freshness`` at its level, or ``missed_run``); a problem with an open row is not alerted
again, a worse level (``warn`` then ``error``) is, and the pass that finds it gone sends one
``recovered`` alert and closes the row. The table is read once per scheduler process and
written only when something changes. A core-tier destination (no adapter) has no table: its
problems are remembered in the scheduler process only, so a restart may alert them again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from dlt_ops.adapters import Column, ColumnType, Statement, TableSpec
from dlt_ops.log import get_logger

if TYPE_CHECKING:
    from dlt_ops.alerts import Alert, AlertSink
    from dlt_ops.config import ProjectConfig
    from dlt_ops.ledger.freshness import Freshness
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.target import Target
    from dlt_ops.target.sessions import SessionPool

log = get_logger(__name__)

TABLE_NAME = "_dlt_ops_freshness_alerts"
_T, _TS = ColumnType.TEXT, ColumnType.TIMESTAMPTZ
FRESHNESS_ALERTS_TABLE = TableSpec(
    TABLE_NAME,
    (
        Column("source_section", _T, nullable=False),
        Column("problem", _T, nullable=False),  # freshness | missed_run
        Column("level", _T, nullable=False),  # warn | error | missed
        Column("detail", _T),
        Column("opened_at", _TS, nullable=False),
        Column("resolved_at", _TS),
    ),
    unique=("source_section", "problem"),
)
_A = f"{{{TABLE_NAME}}}"
SELECT_OPEN = Statement(
    f"SELECT problem, level FROM {_A} WHERE source_section = ? AND resolved_at IS NULL"
)
SELECT_ALL_OPEN = Statement(
    f"SELECT source_section, problem, level FROM {_A} WHERE resolved_at IS NULL"
)
DELETE = Statement(f"DELETE FROM {_A} WHERE source_section = ? AND problem = ?")
INSERT = Statement(
    f"INSERT INTO {_A} (source_section, problem, level, detail, opened_at) VALUES (?, ?, ?, ?, ?)"
)
RESOLVE = Statement(
    f"UPDATE {_A} SET resolved_at = ? WHERE source_section = ? AND problem = ? "
    "AND resolved_at IS NULL"
)
_RANK = {"warn": 1, "error": 2, "missed": 1}


def problems_of(verdict: Freshness) -> dict[str, str]:
    """What is wrong with a source now: ``{problem: level}``."""
    found: dict[str, str] = {}
    if verdict.level in ("warn", "error"):
        found["freshness"] = str(verdict.level)
    if verdict.missed_slot is not None:
        found["missed_run"] = "missed"
    return found


@dataclass
class FreshnessWatch:
    """The open problems of every source, as last stored; lives as long as the scheduler."""

    open: dict[str, dict[str, str]] = field(default_factory=dict)

    def check(
        self,
        registry: PluginRegistry,
        config: ProjectConfig,
        sources: Sequence[str],
        now: datetime,
    ) -> int:
        """Alert what changed for ``sources`` at ``now``; returns how many alerts were sent.
        Never raises: a broken ledger or table loses this pass's alerts, not the scheduler."""
        from dlt_ops.ledger.status import collect_freshness
        from dlt_ops.target.sessions import SessionPool

        try:
            verdicts = collect_freshness(registry, config, sources, now)
        except Exception as exc:  # the runs went on; their alerts come next pass
            log.error("freshness.check_failed", error=str(exc))
            return 0
        # one read-only pool for the pass: a session per database, and a file unchanged since
        # the last pass answers from the read cache without being opened (target/read_cache.py)
        # (closed before any write: an embedded file takes one configuration per process)
        with SessionPool(registry, config) as pool:
            wheres = self._read_all(registry, config, pool, verdicts)
        sinks: list[AlertSink] | None = None
        sent = 0
        for source, where in wheres.items():
            verdict = verdicts[source]
            if where is None or verdict is None:
                continue
            try:
                if isinstance(where, Exception):
                    raise where
                alerts = self._changes(registry, config, where, source, verdict, now)
            except Exception as exc:  # a destination that refuses the state table
                log.error("freshness.state_failed", source=source, error=str(exc))
                continue
            if alerts and sinks is None:
                from dlt_ops.alerts.dispatch import build_alert_sinks

                sinks = build_alert_sinks(registry, config)
            for alert in alerts:
                from dlt_ops.alerts.dispatch import send_all

                log.warning("freshness.alert", source=source, kind=str(alert.kind),
                            message=alert.message)  # fmt: skip
                sent += send_all(sinks or [], alert)
        return sent

    def _read_all(
        self,
        registry: PluginRegistry,
        config: ProjectConfig,
        pool: SessionPool,
        verdicts: dict[str, Freshness | None],
    ) -> dict[str, Target | Exception | None]:
        """Each readable source's target (resolved once for the pass), its stored problems
        read into :attr:`open` through ``pool``; ``None`` where they cannot be read now."""
        from dlt_ops.target import Target, resolve_target

        wheres: dict[str, Target | Exception | None] = {}
        for source, verdict in verdicts.items():
            if verdict is None:  # ledger unreadable: not a recovery, not a miss
                continue
            try:
                wheres[source] = resolve_target(registry, config, source)
            except Exception as exc:  # noqa: BLE001 - said by check(), for this source only
                wheres[source] = exc
        resolved = {s: w for s, w in wheres.items() if isinstance(w, Target)}
        self._prefetch(registry, config, list(resolved), pool, resolved)
        for source, where in wheres.items():
            if isinstance(where, Target):
                try:
                    if self._stored(registry, config, where, source, pool) is None:
                        wheres[source] = None  # unknown what was sent: next pass asks again
                except Exception as exc:  # a destination that refuses the state table
                    wheres[source] = exc
        return wheres

    def _changes(
        self,
        registry: PluginRegistry,
        config: ProjectConfig,
        where: Target,
        source: str,
        verdict: Freshness,
        now: datetime,
    ) -> list[Alert]:
        stored = self._stored(registry, config, where, source)  # read by _read_all
        if stored is None:  # unknown what was sent: next pass asks again
            return []
        current = problems_of(verdict)
        opened, closed = _diff(stored, current)
        if (opened or closed) and where.has_adapter:
            # about to alert: read the table again, another scheduler may have sent it already
            self.open.pop(source, None)
            stored = self._stored(registry, config, where, source)
            if stored is None:
                return []
            opened, closed = _diff(stored, current)
        if not opened and not closed:
            return []
        self._save(registry, config, where, source, opened, closed, verdict, now)
        self.open[source] = {**{p: lvl for p, lvl in stored.items() if p not in closed}, **opened}
        return [_alert(where, verdict, p, now) for p in opened] + [
            _alert(where, verdict, p, now, recovered=True) for p in closed
        ]

    def _prefetch(
        self,
        registry: PluginRegistry,
        config: ProjectConfig,
        sources: Sequence[str],
        pool: SessionPool | None = None,
        wheres: Mapping[str, Target] | None = None,
    ) -> None:
        """The stored problems of the sources sharing a dataset, in one session and one query
        for all of them (a fleet in one dataset costs a few statements, not a session per
        source); a source alone in its dataset, or a dataset that cannot be read now, is left to
        :meth:`_stored`. ``wheres``: targets the caller resolved already; ``pool``: the
        pass's sessions (else one of its own)."""
        from dlt_ops.target import resolve_target
        from dlt_ops.target.sessions import SessionPool

        if pool is None:
            with SessionPool(registry, config) as own:
                return self._prefetch(registry, config, sources, own, wheres)
        groups: dict[tuple[str, str, str], tuple[Target, list[str]]] = {}
        for source in sources:
            if source in self.open:
                continue
            try:
                where = wheres[source] if wheres else resolve_target(registry, config, source)
            except Exception:  # noqa: BLE001 - its own pass below says what is wrong
                continue
            if where.has_adapter:
                groups.setdefault(where.key, (where, []))[1].append(source)
        for where, names in groups.values():
            if len(names) < 2:
                continue
            stored: dict[str, dict[str, str]] = {name: {} for name in names}
            try:
                session = pool.get(where)
                if session.fetch_columns(TABLE_NAME) is not None:
                    for source, problem, level in session.query(SELECT_ALL_OPEN):
                        if source in stored:
                            stored[source][problem] = level
            except Exception as exc:  # down or busy: each source asks again by itself
                log.debug("freshness.state_unread", sources=len(names), error=str(exc))
                continue
            self.open.update(stored)

    def _stored(
        self,
        registry: PluginRegistry,
        config: ProjectConfig,
        where: Target,
        source: str,
        pool: SessionPool | None = None,
    ) -> dict[str, str] | None:
        """The source's open problems; ``None`` when the table cannot be read now (a database
        file another run holds, a destination that is down). ``pool``: the pass's first read
        (answered from the read cache while the database is unchanged); without one, a fresh
        session (the re-read just before alerting must see what another scheduler wrote)."""
        if source in self.open:
            return self.open[source]
        found: dict[str, str] = {}
        if where.has_adapter:  # read once per process: a restart remembers what was sent
            from dlt_ops.destinations import open_session

            try:
                if pool is not None:
                    session = pool.get(where)
                else:
                    session = open_session(registry, config, where, read_only=True)
            except Exception as exc:  # never loaded there (no file yet), or busy
                log.debug("freshness.state_unread", source=source, error=str(exc))
                if where.single_writer and not _exists(where):
                    self.open[source] = found
                    return found
                return None
            try:
                if session.fetch_columns(TABLE_NAME) is not None:  # reading creates nothing
                    found = {p: lvl for p, lvl in session.query(SELECT_OPEN, source)}
            finally:
                if pool is None:  # the pool closes its own
                    session.close()
        self.open[source] = found
        return found

    def _save(
        self,
        registry: PluginRegistry,
        config: ProjectConfig,
        where: Target,
        source: str,
        opened: dict[str, str],
        closed: list[str],
        verdict: Freshness,
        now: datetime,
    ) -> None:
        if not where.has_adapter:  # core tier: remembered in this process only
            return
        from dlt_ops.destinations import open_session

        session = open_session(registry, config, where)
        try:
            session.ensure_table(FRESHNESS_ALERTS_TABLE)
            for problem, level in opened.items():
                session.execute(DELETE, source, problem)
                session.execute(INSERT, source, problem, level, verdict.describe(), now)
            for problem in closed:
                session.execute(RESOLVE, now, source, problem)
        finally:
            session.close()


def _diff(stored: dict[str, str], current: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """Problems to alert (new, or worse than stored) and problems gone."""
    opened = {p: lvl for p, lvl in current.items()
              if p not in stored or _RANK[lvl] > _RANK.get(stored[p], 0)}  # fmt: skip
    return opened, [p for p in stored if p not in current]


def _exists(where: Target) -> bool:
    """An embedded database's file is there (``database`` is its path)."""
    from pathlib import Path

    return Path(str(where.database)).exists()


def _alert(
    where: Target, verdict: Freshness, problem: str, now: datetime, *, recovered: bool = False
) -> Alert:
    from dlt_ops.alerts import Alert, AlertKind
    from dlt_ops.redact import redact

    what = "freshness SLA" if problem == "freshness" else "missed run"
    if recovered:
        detail = f": {verdict.describe()}" if verdict.level != "unset" else ""
        kind, message = AlertKind.recovered, f"{what} recovered{detail}"
    elif problem == "freshness":
        kind, message = AlertKind.freshness_missed, f"freshness SLA missed: {verdict.describe()}"
    else:
        kind, message = AlertKind.run_missed, f"missed a due run: {verdict.describe()}"
    return Alert(
        kind=kind,
        source=verdict.source,
        run_id="-",
        pipeline_name=where.pipeline_name,
        destination=where.engine,
        dataset=where.dataset,
        trigger_source="y-scheduler",
        started_at=now,
        message=redact(message),
    )
