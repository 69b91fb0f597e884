"""Where receipts are kept: the receipts feature owns ``_dlt_ops_receipts`` and its jsonl lines.

Receipts live beside the runs ledger, wherever the project keeps one: in the run's own
destination and dataset (full tier, when the ``destination`` ledger sink is configured) and in
the jsonl ledger's file (``event: "receipt"`` lines, when the ``jsonl`` sink is configured).
Writes are observability, best-effort like the ledger; the caller isolates each store.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from contextlib import nullcontext
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from dlt_ops.adapters import ColumnInfo, Statement
from dlt_ops.atomic_file import write_atomically
from dlt_ops.jsonl import append_events, read_events, rewriting
from dlt_ops.receipts.model import RECEIPT_KEYS, RECEIPTS_TABLE, RECEIPTS_TABLE_NAME, ReceiptRow

if TYPE_CHECKING:
    from dlt_ops.adapters import DestinationSession

INSERT_RECEIPT = Statement(
    f"INSERT INTO {{{RECEIPTS_TABLE_NAME}}} ({', '.join(RECEIPT_KEYS)}) "
    f"VALUES ({', '.join('?' for _ in RECEIPT_KEYS)})"
)


def _select_list(present: Iterable[ColumnInfo]) -> str:
    """``RECEIPT_KEYS``; a column an older version's table lacks reads as ``NULL``."""
    have = {c.name.lower() for c in present}
    return ", ".join(k if k in have else f"NULL AS {k}" for k in RECEIPT_KEYS)


def _select_receipts(present: Iterable[ColumnInfo]) -> Statement:
    return Statement(
        f"SELECT {_select_list(present)} FROM {{{RECEIPTS_TABLE_NAME}}} WHERE run_id = ? "
        "ORDER BY run_started_at, resource_name"
    )


def _select_source_receipts(present: Iterable[ColumnInfo]) -> Statement:
    return Statement(
        f"SELECT {_select_list(present)} FROM {{{RECEIPTS_TABLE_NAME}}} WHERE source_section = ?"
    )


#: values per ``IN (...)`` list: a fleet's run ids or sources in a few statements, well under
#: every engine's bound on a statement's parameters
IN_BATCH = 500


def _select_in(present: Iterable[ColumnInfo], column: str, n: int, order: str) -> Statement:
    marks = ", ".join("?" for _ in range(n))
    return Statement(
        f"SELECT {_select_list(present)} FROM {{{RECEIPTS_TABLE_NAME}}} "
        f"WHERE {column} IN ({marks}){order}"
    )


PRUNE_COUNT = Statement(f"SELECT COUNT(*) FROM {{{RECEIPTS_TABLE_NAME}}} WHERE run_started_at < ?")
PRUNE_DELETE = Statement(f"DELETE FROM {{{RECEIPTS_TABLE_NAME}}} WHERE run_started_at < ?")

#: The jsonl event name of a receipt line.
RECEIPT_EVENT = "receipt"


class ReceiptStore(Protocol):
    """Keeps receipt rows and reads them back."""

    #: Human label for log lines: the table or file.
    target: str

    def write(self, rows: Sequence[ReceiptRow]) -> None:
        """Store one run's (one attempt's) rows."""

    def read(self, run_id: str) -> list[ReceiptRow]:
        """Every row of ``run_id`` (all attempts), oldest attempt first."""

    def read_source(self, source: str) -> list[ReceiptRow]:
        """Every row of every run of ``source`` (``dlt-ops metrics`` sums them)."""

    def read_runs(self, run_ids: Sequence[str]) -> list[ReceiptRow]:
        """Rows of every run in ``run_ids``, each run's oldest attempt first (what ``read``
        gives one run at a time, for a whole fleet in a few reads)."""

    def read_sources(self, sources: Sequence[str]) -> list[ReceiptRow]:
        """Every row of every run of each of ``sources``."""

    def prune(self, older_than: datetime, *, dry_run: bool) -> int:
        """Delete (or count) rows of runs started before ``older_than``."""


class DestinationReceiptStore:
    """``_dlt_ops_receipts`` in the run's destination and dataset, through its adapter."""

    target = RECEIPTS_TABLE_NAME

    def __init__(self, open_session: Callable[[], DestinationSession]) -> None:
        self.open_session = open_session

    def write(self, rows: Sequence[ReceiptRow]) -> None:
        """Insert the rows (in one transaction where the engine has them)."""
        if not rows:
            return
        session = self.open_session()
        session.ensure_table(RECEIPTS_TABLE)
        with session.transaction() if session.adapter.capabilities.transactions else nullcontext():
            for row in rows:
                session.execute(INSERT_RECEIPT, *row.values())

    def read(self, run_id: str) -> list[ReceiptRow]:
        """Rows of ``run_id``; none when the table does not exist."""
        session = self.open_session()
        present = session.fetch_columns(RECEIPTS_TABLE_NAME)
        if present is None:
            return []
        rows = session.query(_select_receipts(present), run_id)
        return [ReceiptRow.from_mapping(dict(zip(RECEIPT_KEYS, r, strict=True))) for r in rows]

    def read_source(self, source: str) -> list[ReceiptRow]:
        """Rows of every run of ``source``, in one query; none when the table does not exist."""
        session = self.open_session()
        present = session.fetch_columns(RECEIPTS_TABLE_NAME)
        if present is None:
            return []
        rows = session.query(_select_source_receipts(present), source)
        return [ReceiptRow.from_mapping(dict(zip(RECEIPT_KEYS, r, strict=True))) for r in rows]

    def read_runs(self, run_ids: Sequence[str]) -> list[ReceiptRow]:
        """Rows of ``run_ids``: one column lookup, then a statement per ``IN_BATCH`` ids."""
        return self._read_in("run_id", run_ids, " ORDER BY run_started_at, resource_name")

    def read_sources(self, sources: Sequence[str]) -> list[ReceiptRow]:
        """Rows of every run of ``sources``: one column lookup, a statement per batch."""
        return self._read_in("source_section", sources, "")

    def _read_in(self, column: str, values: Sequence[str], order: str) -> list[ReceiptRow]:
        values = list(dict.fromkeys(values))
        if not values:
            return []
        session = self.open_session()
        present = session.fetch_columns(RECEIPTS_TABLE_NAME)
        if present is None:
            return []
        out: list[ReceiptRow] = []
        for at in range(0, len(values), IN_BATCH):
            batch = values[at : at + IN_BATCH]
            rows = session.query(_select_in(present, column, len(batch), order), *batch)
            out += [ReceiptRow.from_mapping(dict(zip(RECEIPT_KEYS, r, strict=True))) for r in rows]
        return out

    def prune(self, older_than: datetime, *, dry_run: bool) -> int:
        """Count or delete rows of runs started before ``older_than``."""
        session = self.open_session()
        if session.fetch_columns(RECEIPTS_TABLE_NAME) is None:
            return 0
        if dry_run:
            return int(session.query(PRUNE_COUNT, older_than)[0][0])
        return session.execute(PRUNE_DELETE, older_than)


class JsonlReceiptStore:
    """``receipt`` lines appended to a JSON-lines file (the jsonl ledger's file)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.target = str(path)

    def write(self, rows: Sequence[ReceiptRow]) -> None:
        """Append one line per row, whole lines under an exclusive lock."""
        if not rows:
            return
        append_events(self.path, ({"event": RECEIPT_EVENT, **row.as_json()} for row in rows))

    def _lines(self) -> list[dict[str, Any]]:
        return read_events(self.path)

    def read(self, run_id: str) -> list[ReceiptRow]:
        """Every receipt line of ``run_id``."""
        return [
            ReceiptRow.from_mapping(line)
            for line in self._lines()
            if line.get("event") == RECEIPT_EVENT and line.get("run_id") == run_id
        ]

    def read_source(self, source: str) -> list[ReceiptRow]:
        """Every receipt line of ``source``."""
        return [
            ReceiptRow.from_mapping(line)
            for line in self._lines()
            if line.get("event") == RECEIPT_EVENT and line.get("source_section") == source
        ]

    def read_runs(self, run_ids: Sequence[str]) -> list[ReceiptRow]:
        """Every receipt line of ``run_ids``, the file read once."""
        return self._lines_where("run_id", set(run_ids))

    def read_sources(self, sources: Sequence[str]) -> list[ReceiptRow]:
        """Every receipt line of ``sources``, the file read once."""
        return self._lines_where("source_section", set(sources))

    def _lines_where(self, key: str, values: set[str]) -> list[ReceiptRow]:
        return [
            ReceiptRow.from_mapping(line)
            for line in self._lines()
            if line.get("event") == RECEIPT_EVENT and line.get(key) in values
        ]

    def prune(self, older_than: datetime, *, dry_run: bool) -> int:
        """Rewrite the file without receipt lines of runs started before ``older_than``; every
        other line (the ledger's) is kept as it is."""
        if not self.path.exists():
            return 0
        # a run appending meanwhile waits, then lands in the new file
        with nullcontext() if dry_run else rewriting(self.path):
            keep: list[str] = []
            removed = 0
            with open(self.path, encoding="utf-8") as handle:
                for raw in handle:
                    try:
                        line = json.loads(raw)
                        old = line.get("event") == RECEIPT_EVENT and (
                            datetime.fromisoformat(line["run_started_at"]) < older_than
                        )
                    except (ValueError, KeyError, TypeError):
                        old = False
                    if old:
                        removed += 1
                    else:
                        keep.append(raw if raw.endswith("\n") else raw + "\n")
            if removed and not dry_run:
                write_atomically(self.path, "".join(keep))
        return removed


def receipt_stores(
    has_adapter: bool,
    *,
    open_session: Callable[[], DestinationSession],
    jsonl_path: Path | None,
) -> list[ReceiptStore]:
    """Where receipts are kept: ``_dlt_ops_receipts`` in the destination whenever it has an
    adapter (whichever ledger sinks are configured: a third-party sink keeps runs, not
    receipts), and the jsonl file when one is given (the ``jsonl`` ledger sink's)."""
    stores: list[ReceiptStore] = []
    if has_adapter:
        stores.append(DestinationReceiptStore(open_session))
    if jsonl_path is not None:
        stores.append(JsonlReceiptStore(jsonl_path))
    return stores


#: per source, its rows from the store that has them, or what reading them raised
SourceRows = dict[str, "list[ReceiptRow] | Exception"]


def first_store_rows(
    stores: Sequence[ReceiptStore],
    sources: Sequence[str],
    read: Callable[[ReceiptStore, list[str]], dict[str, list[ReceiptRow]]],
) -> SourceRows:
    """Each source's rows from the first store that has any, each store read once for all the
    sources still without rows (``read`` gives a store's rows by source); a store that raises
    stands for every source still waiting, as reading them one by one would have."""
    out: SourceRows = {}
    waiting = list(dict.fromkeys(sources))
    for store in stores:
        if not waiting:
            break
        try:
            found = read(store, waiting)
        except Exception as exc:  # the caller names it per source
            out.update(dict.fromkeys(waiting, exc))
            return out
        for source in waiting:
            if found.get(source):
                out[source] = found[source]
        waiting = [s for s in waiting if s not in out]
    out.update({s: [] for s in waiting})
    return out
