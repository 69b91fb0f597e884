"""What ``clean`` would remove, found before anything is touched.

The plan reads only: the local working dirs that exist, the data tables dlt created for the
source (from the dlt schema the destination stores, children included), dlt's own rows for the
schemas the pipeline really used, and the dlt-ops rows of the source in every state table. It
needs nothing of the source's code, so a source whose module was deleted can be cleaned by name.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dlt_ops.adapters import Statement
from dlt_ops.dlt_schema import (
    LOADS_TABLE,
    STATE_TABLE,
    VERSION_TABLE,
    schema_names_of,
    stored_schema,
)

if TYPE_CHECKING:
    from dlt_ops.adapters import DestinationSession
    from dlt_ops.config import ProjectConfig
    from dlt_ops.destinations import ResolvedDestination
    from dlt_ops.project import Project

#: dlt's default layout for the staging dataset of merge loads
STAGING_SUFFIX = "_staging"
DEFAULT_CHECKPOINT_TABLE = "_dlt_custom_checkpoints"
RUNS_TABLE = "_dlt_ops_runs"


@dataclass(frozen=True)
class RowSet:
    """Rows of one table that belong to the source (or to the named resources)."""

    table: str
    where: str
    params: tuple[Any, ...]
    count: int = 0
    #: another dataset than the session's (dlt's staging dataset)
    dataset: str | None = None

    @property
    def label(self) -> str:
        """The table, qualified when it lives in another dataset."""
        return f"{self.dataset}.{self.table}" if self.dataset else self.table

    def describe(self) -> str:
        """``_dlt_rejected: 3 row(s)``."""
        return f"{self.label}: {self.count} row(s)"


@dataclass
class CleanPlan:
    """Everything one clean removes; empty parts are skipped."""

    source: str
    pipeline_name: str
    engine: str
    dataset: str
    #: named resources (selective clean); empty for a full clean
    resources: tuple[str, ...] = ()
    local: bool = True
    remote: bool = True
    include_ledger: bool = False
    local_dirs: list[Path] = field(default_factory=list)
    schema_names: list[str] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    staging_tables: list[str] = field(default_factory=list)
    #: dlt's rows (full clean) then dlt-ops' rows
    rows: list[RowSet] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def selective(self) -> bool:
        """Only the named resources are cleaned."""
        return bool(self.resources)

    @property
    def empty(self) -> bool:
        """Nothing to remove."""
        return not (self.local_dirs or self.tables or self.staging_tables
                    or any(r.count for r in self.rows))  # fmt: skip

    def lines(self) -> list[str]:
        """The plan as printed before the confirmation."""
        out = [f"Source: {self.source}", f"Pipeline: {self.pipeline_name}",
               f"Resources: {', '.join(self.resources) if self.resources else 'all'}"]  # fmt: skip
        if self.local:
            dirs = ", ".join(str(d) for d in self.local_dirs) or "(none found)"
            out.append(f"Local: remove working dir(s) {dirs}")
        if self.remote:
            out.append(f"Remote: {self.engine} dataset {self.dataset}")
            out.append(f"  drop {len(self.tables)} data table(s): {', '.join(self.tables) or '-'}")
            if self.staging_tables:
                staged = ", ".join(self.staging_tables)
                out.append(f"  drop {len(self.staging_tables)} staging table(s) in "
                           f"{self.dataset}{STAGING_SUFFIX}: {staged}")  # fmt: skip
            if self.selective:
                out.append("  reset the resources' dlt state and schema (dlt's drop)")
            out += [f"  delete {r.describe()}" for r in self.rows if r.count]
            if not self.include_ledger:
                out.append(f"  keep {RUNS_TABLE} history (--include-ledger removes it)")
        out += [f"  ! {note}" for note in self.notes]
        return out

    def as_json(self) -> dict[str, Any]:
        """Machine-readable plan."""
        return {
            "source": self.source, "pipeline_name": self.pipeline_name,
            "destination": self.engine, "dataset": self.dataset,
            "resources": list(self.resources), "local_dirs": [str(d) for d in self.local_dirs],
            "schema_names": self.schema_names, "tables": self.tables,
            "staging_tables": self.staging_tables,
            "rows": {r.label: r.count for r in self.rows if r.count}, "notes": self.notes,
        }  # fmt: skip


def local_dirs(config: ProjectConfig, where: ResolvedDestination) -> list[Path]:
    """The source's dlt working dirs under the project (both layouts), those that exist."""
    from dlt_ops.runner.pipeline import pipelines_dir

    base = pipelines_dir(config.root)
    candidates = [base / where.engine / where.dataset / where.pipeline_name,
                  base / where.pipeline_name]  # fmt: skip
    return [d for d in candidates if d.is_dir()]


def checkpoint_tables(project: Project, source: str) -> list[str]:
    """The default checkpoint table and every ``checkpoint_table="..."`` the source's module
    passes (read from its syntax tree: the module is never imported)."""
    names = [DEFAULT_CHECKPOINT_TABLE]
    info = project.sources.get(source)
    if info is None:
        return names
    try:
        tree = ast.parse(info.module_path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return names
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "checkpoint_table":
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                names.append(node.value.value)
    return list(dict.fromkeys(names))


def _count(session: DestinationSession, table: str, where: str, params: tuple[Any, ...]) -> int:
    (row,) = session.query(Statement(f"SELECT COUNT(*) FROM {{{table}}} WHERE {where}"), *params)
    return int(row[0] or 0)


def _rowset(
    session: DestinationSession, table: str, where: str, params: tuple[Any, ...]
) -> RowSet | None:
    columns = session.fetch_columns(table)
    if columns is None:
        return None
    return RowSet(table, where, params, _count(session, table, where, params))


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join('?' for _ in values)})"


def ops_rowsets(
    session: DestinationSession,
    source: str,
    pipeline_name: str,
    resources: tuple[str, ...],
    checkpoint_names: list[str],
    include_ledger: bool,
) -> list[RowSet]:
    """The source's (or its resources') rows in every dlt-ops state table that exists."""
    by_resource = f" AND {_in('resource_name', resources)}" if resources else ""
    specs: list[tuple[str, str, tuple[Any, ...]]] = [
        (table, "source_section = ?" + by_resource, (source, *resources))
        for table in ("_dlt_rejected", "_dlt_backfills", "_dlt_ops_receipts", "_dlt_ops_drift")
    ]
    specs += [(t, "pipeline_name = ?" + by_resource, (pipeline_name, *resources))
              for t in checkpoint_names]  # fmt: skip
    if not resources:  # a free lease row of the source (its holder is gone)
        specs.append(("_dlt_ops_leases", "lease_name = ? AND holder IS NULL", (source,)))
    if include_ledger:
        specs.append((RUNS_TABLE, "source_section = ?" + by_resource, (source, *resources)))
    return [r for t, w, p in specs if (r := _rowset(session, t, w, p)) is not None]


def remote_plan(
    plan: CleanPlan, session: DestinationSession, project: Project, known: list[str] | None
) -> None:
    """Fill the remote half of ``plan`` from what the destination holds.

    ``known`` is the source's resource list from its code (``None`` for an orphan: the stored
    schema's resources are the reference then). Raises ``UnknownResourceError`` for a name
    that is neither."""
    from dlt_ops.errors import UnknownResourceError

    names = schema_names_of(session, plan.pipeline_name)
    if not names and stored_schema(session, plan.source) is not None:
        names = [plan.source]  # state rows gone but the schema is there: the usual name
    plan.schema_names = names
    stored = [s for n in names if (s := stored_schema(session, n)) is not None]
    if plan.selective:
        available = known if known is not None else sorted({r for s in stored for r in s.resources})
        unknown = [r for r in plan.resources if r not in available]
        if unknown:
            raise UnknownResourceError(plan.source, unknown, available)
    tables: list[str] = []
    for schema in stored:
        if plan.selective:
            tables += [t for r in plan.resources for t in schema.tables_of(r)]
        else:
            tables += sorted(schema.table_resources, key=lambda t: (t.count("__"), t))
    plan.tables = [t for t in dict.fromkeys(tables) if session.fetch_columns(t) is not None]
    staging = plan.dataset + STAGING_SUFFIX
    adapter, client = session.adapter, session.client
    plan.staging_tables = [t for t in dict.fromkeys(tables)
                           if adapter.fetch_columns(client, staging, t) is not None]  # fmt: skip
    if not names:
        plan.notes.append(f"no dlt state of {plan.pipeline_name} in {plan.dataset}")
    if not plan.selective:  # dlt's own rows: the pipeline's state, its schemas' loads/versions
        specs: list[tuple[str, str, tuple[Any, ...]]] = [
            (STATE_TABLE, "pipeline_name = ?", (plan.pipeline_name,))
        ]
        if names:
            specs += [(t, _in("schema_name", tuple(names)), tuple(names))
                      for t in (LOADS_TABLE, VERSION_TABLE)]  # fmt: skip
        plan.rows += [r for t, w, p in specs if (r := _rowset(session, t, w, p)) is not None]
        # dlt keeps the schema's versions in the staging dataset too: left there, the next
        # merge load would take the dropped staging tables for existing ones
        if names and adapter.fetch_columns(client, staging, VERSION_TABLE) is not None:
            where = _in("schema_name", tuple(names))
            stmt = Statement(f"SELECT COUNT(*) FROM {{{VERSION_TABLE}}} WHERE {where}")
            (row,) = adapter.query(client, staging, stmt, tuple(names))
            plan.rows.append(RowSet(VERSION_TABLE, where, tuple(names), int(row[0] or 0), staging))
    checkpoints = checkpoint_tables(project, plan.source)
    plan.rows += ops_rowsets(session, plan.source, plan.pipeline_name, plan.resources,
                             checkpoints, plan.include_ledger)  # fmt: skip
