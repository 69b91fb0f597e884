"""``dlt-ops backfill list|show``: read ``_dlt_backfills`` back (read-only, never creates)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer

from dlt_ops.cli.help_format import PlainHelpGroup
from dlt_ops.cli.state import AppState, RootOption
from dlt_ops.tables import Column, Table

if TYPE_CHECKING:
    from dlt_ops.backfill.state import ChunkRow

backfill_app = typer.Typer(
    cls=PlainHelpGroup, no_args_is_help=True, help="Inspect backfills and their chunks."
)


def _rows(
    state: AppState, source: str | None, dataset: str | None
) -> tuple[list[tuple[str, list[ChunkRow]]], list[str]]:
    """``(source, rows)`` per source (each engine+dataset read once; core tier skipped), and
    one message per source whose backfill state could not be read.

    Sessions come from the read-only pool ``status`` uses: a destination file unchanged since
    the last identical read is answered from the project's read cache, without its driver."""
    from dlt_ops.backfill.state import BackfillState
    from dlt_ops.destinations import resolve_destination
    from dlt_ops.errors import ConfigError, DltOpsError
    from dlt_ops.project.discovery import discover
    from dlt_ops.target.sessions import SessionPool

    config, registry = state.project(), state.registry()
    names = [source] if source else list(discover(config.root).sources)
    if source:
        discover(config.root).source(source)  # unknown source: usage error
    # one read per database and dataset (Target.key): sources sharing both share the table
    cache: dict[tuple[str, str, str], list[ChunkRow] | str | None] = {}
    found_rows: list[tuple[str, list[ChunkRow]]] = []
    problems: list[str] = []
    with SessionPool(registry, config, read_only=True) as pool:
        for name in sorted(names):
            try:
                where = pool.target(resolve_destination(config, name, dataset))
            except ConfigError as exc:
                if source:  # asked for by name: say why there is nothing to show
                    problems.append(f"{name}: backfill state unreadable: {exc}")
                continue
            except DltOpsError as exc:  # a broken adapter plugin, say
                problems.append(f"{name}: backfill state unreadable: {exc}")
                continue
            key = where.key
            if key not in cache:
                if not where.has_adapter:
                    cache[key] = None  # core tier: no backfill state exists there
                    continue
                try:  # an invalid name is unreadable (the pool checks it), never "none yet"
                    reader = BackfillState(pool.get(where), "reader")
                    cache[key] = reader.all_rows() if reader.exists() else []
                except DltOpsError as exc:
                    cache[key] = str(exc)
            found = cache[key]
            if isinstance(found, str):
                problems.append(f"{name}: backfill state unreadable: {found}")
            elif found is not None:
                found_rows.append((name, [r for r in found if r.source_section == name]))
    return found_rows, problems


def _summed_receipt(
    state: AppState, source: str, dataset: str | None, rows: list[ChunkRow]
) -> tuple[str, list[Any]]:
    """The receipt rows of this backfill's chunk attempts (all of them), summed per resource,
    read from the dataset the backfill ran in."""
    from dlt_ops.destinations import resolve_destination
    from dlt_ops.errors import DltOpsError
    from dlt_ops.ledger.model import summarize_error
    from dlt_ops.receipts.render import receipt_table, summed
    from dlt_ops.receipts.service import backfill_receipts

    config = state.project()
    run_ids = sorted({r.run_id for r in rows})
    try:
        where = resolve_destination(config, source, dataset)
        found = backfill_receipts(
            state.registry(), config, where, source, rows[0].backfill_id, run_ids
        )
    except DltOpsError as exc:  # the chunk table read fine; receipts are observability
        return f"  ! receipts unreadable: {summarize_error(exc)}", []
    total = summed(found)
    return receipt_table(total), [r.as_json() for r in total]


def _group(rows: list[ChunkRow]) -> dict[str, list[ChunkRow]]:
    out: dict[str, list[ChunkRow]] = {}
    for row in rows:
        out.setdefault(row.backfill_id, []).append(row)
    return out


def _plan_doc(source: str, backfill_id: str, rows: list[ChunkRow]) -> dict[str, Any]:
    from dlt_ops.backfill.service import status_counts

    first = rows[0]
    return {
        "backfill_id": backfill_id,
        "source": source,
        "resources": first.resource_name,
        "from": first.backfill_from.isoformat(),
        "to": first.backfill_to.isoformat(),
        "chunk": first.chunk_size,
        **status_counts(rows),
    }


@backfill_app.command("list")
def list_backfills(
    ctx: typer.Context,
    source: Annotated[str | None, typer.Option("--source", "-s", help="Only this source.")] = None,
    dataset: Annotated[
        str | None, typer.Option("--dataset", "-d", help="Dataset, overriding the config.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON document on stdout.")] = False,
    root: RootOption = None,
) -> None:
    """Backfill plans per source: window, chunk size, status counts, coverage (exit 1 when a
    source's backfill state is unreadable)."""
    found, problems = _rows(ctx.obj.with_root(root), source, dataset)
    for problem in problems:
        typer.echo(f"! {problem}", err=True)
    docs = [
        _plan_doc(name, bid, rows) for name, rows in found for bid, rows in _group(rows).items()
    ]
    if as_json:
        typer.echo(json.dumps(docs, indent=2))
    elif not docs and not problems:
        typer.echo("no backfills recorded")
    elif docs:
        _print_plans(docs)
    if problems:  # an outage is never an empty history
        raise typer.Exit(1)


PLAN_COLUMNS = (
    Column("backfill_id", 17),
    Column("source", 16),
    Column("from", 26),
    Column("to", 26),
    Column("chunk", 6),
    Column("done", 9, align="right"),
    Column("failed", 6, align="right"),
    Column("held", 5, align="right"),
    Column("cover", 6, align="right"),
)
CHUNK_COLUMNS = (
    Column("chunk", 7),
    Column("from", 27, sep=""),
    Column("status", 11, sep="", status=True),
    Column("att", 4, align="right", sep=""),
    Column("records", 8, align="right", sep="  "),
    Column("holder / error", sep="  "),
)


def _print_plans(docs: list[dict[str, Any]]) -> None:
    from dlt_ops.tables import echo

    table = Table(PLAN_COLUMNS)
    for d in docs:
        s = d["by_status"]
        held = s["claimed"] + s["running"]
        done = f"{s['completed']:>4}/{d['total']:<4}"
        table.add(d["backfill_id"], d["source"], d["from"], d["to"], d["chunk"], done,
                  s["failed"], held, f"{d['coverage']:.0%}")  # fmt: skip
    echo([table])


@backfill_app.command("show")
def show_backfill(
    ctx: typer.Context,
    backfill_id: Annotated[
        str, typer.Argument(help="The backfill id (from `backfill list`).", metavar="BACKFILL_ID")
    ],
    source: Annotated[str | None, typer.Option("--source", "-s", help="Only this source.")] = None,
    dataset: Annotated[
        str | None, typer.Option("--dataset", "-d", help="Dataset, overriding the config.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON document on stdout.")] = False,
    root: RootOption = None,
) -> None:
    """One backfill's chunks: status, attempts, holder, lease, records, last error; coverage."""
    from dlt_ops.backfill.state import utcnow
    from dlt_ops.errors import LedgerUnreadableError, UsageError
    from dlt_ops.tables import echo

    found, problems = _rows(ctx.obj.with_root(root), source, dataset)
    match = [(name, [r for r in rows if r.backfill_id == backfill_id]) for name, rows in found]
    match = [(name, rows) for name, rows in match if rows]
    if not match and problems:  # it may live where we could not look
        raise LedgerUnreadableError(f"backfill '{backfill_id}' not found; " + "; ".join(problems))
    if not match:
        raise UsageError(
            f"no backfill '{backfill_id}' found; `dlt-ops backfill list` shows recorded ones."
        )
    name, rows = match[0]
    doc = _plan_doc(name, backfill_id, rows)
    receipt = _summed_receipt(ctx.obj, name, dataset, rows)
    if as_json:
        chunks = [r.as_json() for r in rows]
        typer.echo(json.dumps({**doc, "chunks": chunks, "receipt": receipt[1]}, indent=2))
        return
    typer.echo(
        f"Backfill {backfill_id} of '{name}' [{doc['from']} → {doc['to']}) in {doc['chunk']} "
        f"chunks{' resources=' + doc['resources'] if doc['resources'] else ''}"
    )
    now = utcnow()
    table = Table(CHUNK_COLUMNS, indent="  ")
    for r in rows:
        extra = r.last_error or ""
        if r.status in ("claimed", "running"):
            lease = (f"expired at {r.lease_expires_at}" if r.lease_expired(now)
                     else f"live until {r.lease_expires_at}")  # fmt: skip
            extra = f"{r.claimed_by} (lease {lease})"
        records = "-" if r.records_loaded is None else str(r.records_loaded)
        table.add(r.chunk_id, r.chunk_from.isoformat(), r.status, r.attempts, records,
                  extra[:120])  # fmt: skip
    echo([table])
    s = doc["by_status"]
    typer.echo(
        f"coverage {doc['coverage']:.0%}: {s['completed']}/{doc['total']} completed, "
        f"{s['failed']} failed, {s['claimed'] + s['running']} held, {s['pending']} pending; "
        f"{doc['records_loaded']} records"
    )
    typer.echo("receipt, summed over every chunk and retry:")
    typer.echo(receipt[0])
