"""Which run each dlt load package came from, and how many rows it holds.

dlt keeps a package that was extracted or normalized but not loaded (the run was killed, the
destination went away) and loads it on the next run of the pipeline. That next run must book
those rows — the ledger's loaded counts have to add up to what the tables hold — and say whose
they were. dlt knows neither once the first process is gone: a package's row counts live only
in the normalize step's in-memory metrics. So each run notes, in a small JSON file next to dlt's
working state, the run that extracted each package and its rows per table once normalized; the
run that finally loads a package reads them back.

The file is data only (never unpickled) and advisory: a missing or unreadable one means "rows
unknown" for an earlier package, which is logged, never fatal.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dlt_ops.atomic_file import write_atomically
from dlt_ops.log import get_logger

log = get_logger(__name__)

BOOK_FILE = "dltops-packages.json"


@dataclass(frozen=True)
class PackageOrigin:
    """The run that extracted a load package, and the package's rows once known (in all, and
    per user table where noted: receipts split them by resource)."""

    load_id: str
    run_id: str | None
    rows: int | None
    tables: Mapping[str, int] | None = None
    #: The run whose ledger row books the package (noted just before that row's finish).
    booked_by: str | None = None


def _counts(value: object) -> dict[str, int] | None:
    """A ``{table: rows}`` note, or ``None`` when it is not one."""
    if not isinstance(value, dict):
        return None
    out = {k: v for k, v in value.items()
           if isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)}  # fmt: skip
    return out if len(out) == len(value) else None


class PackageBook:
    """Read-modify-write of one pipeline working directory's package notes."""

    def __init__(self, working_dir: Path) -> None:
        self.path = working_dir / BOOK_FILE

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, dict)}

    def _write(self, data: dict[str, dict[str, Any]]) -> None:
        try:
            write_atomically(self.path, json.dumps(data, sort_keys=True))
        except OSError as exc:
            log.warning("packages.book_not_written", path=str(self.path), error=str(exc))

    def extracted(self, load_id: str, run_id: str) -> None:
        """Note that ``run_id`` extracted package ``load_id``."""
        data = self._read()
        data.setdefault(load_id, {})["run_id"] = run_id
        self._write(data)

    def normalized(self, tables_by_package: dict[str, dict[str, int]]) -> None:
        """Note each package's rows per user table, as the normalize step counted them."""
        if not tables_by_package:
            return
        data = self._read()
        for load_id, tables in tables_by_package.items():
            entry = data.setdefault(load_id, {})
            entry["rows"], entry["tables"] = sum(tables.values()), tables
        self._write(data)

    def origin(self, load_id: str) -> PackageOrigin:
        """What is known of ``load_id``."""
        entry = self._read().get(load_id, {})
        run_id, rows, booked = entry.get("run_id"), entry.get("rows"), entry.get("booked_by")
        return PackageOrigin(
            load_id,
            run_id if isinstance(run_id, str) else None,
            rows if isinstance(rows, int) and not isinstance(rows, bool) else None,
            _counts(entry.get("tables")),
            booked if isinstance(booked, str) else None,
        )

    def booked(self, load_ids: list[str], run_id: str) -> None:
        """Note that ``run_id`` books ``load_ids`` (its load step loaded them): a run killed
        before its ledger row's finish leaves them for the next run to book on that row, one
        killed after it but before its receipt for the next run to write the receipt."""
        data = self._read()
        for load_id in load_ids:
            if load_id in data:
                data[load_id]["booked_by"] = run_id
        self._write(data)

    def noted(self) -> list[str]:
        """Every package with a note."""
        return sorted(self._read())

    def load_ids_of(self, run_id: str) -> list[str]:
        """The packages ``run_id`` extracted that are still noted."""
        return sorted(k for k, v in self._read().items() if v.get("run_id") == run_id)

    def forget(self, load_ids: list[str]) -> None:
        """Drop the notes of packages that are loaded now."""
        data = self._read()
        if any(k in data for k in load_ids):
            for load_id in load_ids:
                data.pop(load_id, None)
            self._write(data)


def rows_per_package(normalize_info: Any) -> dict[str, dict[str, int]]:
    """Rows per user table of each package a normalize step processed (``_dlt*`` excluded)."""
    out: dict[str, dict[str, int]] = {}
    metrics = getattr(normalize_info, "metrics", None) or {}
    for load_id, steps in metrics.items():
        tables: dict[str, int] = {}
        for step in steps:
            for table, m in step.get("table_metrics", {}).items():
                if not table.startswith("_dlt"):
                    tables[table] = tables.get(table, 0) + m.items_count
        out[load_id] = tables
    return out


def _sum_tables(origins: list[PackageOrigin]) -> dict[str, int] | None:
    """Rows per table over ``origins``; ``None`` when one of them is not known per table."""
    out: dict[str, int] = {}
    for origin in origins:
        if origin.tables is None:
            return None
        for table, rows in origin.tables.items():
            out[table] = out.get(table, 0) + rows
    return out


@dataclass(frozen=True)
class LoadedBooks:
    """What a run's load step loaded: rows in total and per table (the ledger books the one,
    the receipt the other: one count for both), and the packages of earlier runs."""

    records_loaded: int | None
    inherited: tuple[PackageOrigin, ...]
    book: PackageBook | None = None
    load_ids: tuple[str, ...] = ()
    tables: Mapping[str, int] | None = None

    def mark_booked(self, run_id: str) -> None:
        """Note the packages as booked by ``run_id`` (once its load step loaded them)."""
        if self.book is not None and self.load_ids:
            self.book.booked(list(self.load_ids), run_id)

    def settle(self) -> None:
        """Forget the loaded packages' notes, once the run's ledger row and its receipt
        recorded them (a run killed before that leaves them for :func:`rows_landed_by` or
        :func:`booked_unreceipted`)."""
        if self.book is not None:
            self.book.forget(list(self.load_ids))


@dataclass(frozen=True)
class Landed:
    """What a dead run's committed load put in the tables: rows in all and per table."""

    rows: int
    tables: Mapping[str, int] | None


def rows_landed_by(working_dir: Path, run_id: str) -> Landed | None:
    """What ``run_id``'s load landed (packages in ``load/loaded/<id>`` it booked, or extracted
    and nobody booked), although the run died before its ledger row said so; ``None`` when it
    landed none (or unknown)."""
    book = PackageBook(working_dir)
    landed = [
        o for o in (book.origin(i) for i in book.noted())
        if (working_dir / "load" / "loaded" / o.load_id).is_dir()
        and (o.booked_by == run_id or (o.booked_by is None and o.run_id == run_id))
    ]  # fmt: skip
    if not landed or any(o.rows is None for o in landed):
        return None
    book.forget([o.load_id for o in landed])
    return Landed(sum(o.rows or 0 for o in landed), _sum_tables(landed))


def booked_unreceipted(working_dir: Path) -> dict[str, Landed]:
    """Loaded packages whose run's ledger row booked them, then the run died before its
    receipt (their notes outlived it), by that run; their notes are forgotten."""
    book = PackageBook(working_dir)
    found: dict[str, list[PackageOrigin]] = {}
    for load_id in book.noted():
        origin = book.origin(load_id)
        if origin.booked_by is not None and (working_dir / "load" / "loaded" / load_id).is_dir():
            found.setdefault(origin.booked_by, []).append(origin)
    if not found:
        return {}
    book.forget([o.load_id for origins in found.values() for o in origins])
    return {run: Landed(sum(o.rows or 0 for o in origins), _sum_tables(origins))
            for run, origins in found.items()}  # fmt: skip


def book_loaded(
    book: PackageBook,
    load_ids: list[str],
    own: set[str],
    count_landed: Callable[[str], dict[str, int] | None] | None = None,
) -> LoadedBooks:
    """Sum the rows of every package loaded (``load_ids``); ``own`` are this run's packages.

    A package whose rows were never noted (its run died between normalize and the note, or
    ran before this book existed) is counted where it landed, by ``count_landed``.
    """
    total: int | None = 0
    inherited: list[PackageOrigin] = []
    origins: list[PackageOrigin] = []
    for load_id in load_ids:
        origin = book.origin(load_id)
        if origin.tables is None and count_landed is not None:
            tables = count_landed(load_id)
            rows = sum(tables.values()) if tables is not None else origin.rows
            origin = PackageOrigin(origin.load_id, origin.run_id, rows, tables)
        origins.append(origin)
        if load_id not in own:
            inherited.append(origin)
        if origin.rows is None:
            log.warning("packages.rows_unknown", load_id=load_id)
            total = None
        elif total is not None:
            total += origin.rows
    return LoadedBooks(total, tuple(inherited), book, tuple(load_ids), _sum_tables(origins))


def count_landed_rows(pipeline: Any, load_id: str) -> dict[str, int] | None:
    """Rows of package ``load_id`` per user table of the destination (nested tables through
    their root row), read with dlt's own SQL client; ``None`` when they cannot be counted."""
    from dlt.common.schema.utils import get_root_table

    try:
        schema = pipeline.default_schema
        tables = schema.data_tables()
        counted: dict[str, int] = {}
        with pipeline.sql_client() as client:
            for table in tables:
                name, columns = table["name"], table.get("columns", {})
                if name.startswith("_dlt"):
                    continue
                qualified = client.make_qualified_table_name(name)
                if "_dlt_load_id" in columns:
                    sql = f"SELECT count(*) FROM {qualified} WHERE _dlt_load_id = %s"
                else:
                    root = get_root_table(schema.tables, name)["name"]
                    sql = (
                        f"SELECT count(*) FROM {qualified} WHERE _dlt_root_id IN (SELECT _dlt_id "
                        f"FROM {client.make_qualified_table_name(root)} WHERE _dlt_load_id = %s)"
                    )
                rows = client.execute_sql(sql, load_id)
                counted[name] = int(rows[0][0]) if rows else 0
        return counted
    except Exception as exc:  # noqa: BLE001 - a count we cannot take is reported as unknown
        log.warning("packages.count_failed", load_id=load_id, error=str(exc)[:300])
        return None
