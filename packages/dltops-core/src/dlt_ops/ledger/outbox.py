"""A run's final ledger write, kept locally when the ledger could not take it.

A run that lost its destination (an outage, a full disk on the database's host) cannot write
its terminal row: the row would stay ``running`` and the cause of the failure be lost, leaving
``status`` to guess that the process died. So a finish that a sink refuses is written to a small
JSON file under ``.dlt-ops/outbox/`` (atomically, one file per run attempt and sink), and the
next command that reaches the destination — ``pipeline run``, ``pipeline status``, ``runs`` —
writes it to the row and removes the file. The write is the sink's own ``finish``, which only
ever updates a row that still says ``running``: a row something else closed meanwhile is left
as it is. Reading the directory costs no round trip; an empty outbox costs nothing else.

The files are data only (never unpickled) and hold what the ledger row would hold, already
redacted by the writer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from dlt_ops.atomic_file import write_atomically
from dlt_ops.ledger.model import ALL_KEYS, RunRecord, RunStatus
from dlt_ops.ledger.sinks import LedgerSink
from dlt_ops.log import get_logger
from dlt_ops.redact import redact

log = get_logger(__name__)

OUTBOX_DIR = Path(".dlt-ops") / "outbox"
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


@dataclass(frozen=True)
class Pending:
    """One kept finish: which sink refused it, the record, and its file."""

    sink: str
    record: RunRecord
    path: Path


def outbox_dir(root: Path) -> Path:
    """The project's outbox directory."""
    return root / OUTBOX_DIR


def _file_name(sink: str, record: RunRecord) -> str:
    started = record.started_at.strftime("%Y%m%dT%H%M%S%f")
    return _SAFE.sub("_", f"{record.run_id}-{started}-{sink}")[:200] + ".json"


def keep(root: Path, sink: str, record: RunRecord) -> None:
    """Keep ``record`` (a terminal row ``sink`` refused) for a later command to write."""
    data = {"sink": sink, "record": record.as_json()}
    path = outbox_dir(root) / _file_name(sink, record)
    try:
        write_atomically(path, json.dumps(data, sort_keys=True))
    except OSError as exc:  # a full local disk too: the row stays running, status says so
        log.error("ledger.outbox_not_written", run_id=record.run_id, error=str(exc)[:300])
        return
    log.warning("ledger.outbox_kept", run_id=record.run_id, sink=sink, path=str(path))


def _record(values: dict[str, Any]) -> RunRecord:
    fields: dict[str, Any] = {k: values.get(k) for k in ALL_KEYS}
    for key, value in fields.items():
        if isinstance(value, str) and (key.endswith("_at") or key.startswith("window_")):
            fields[key] = datetime.fromisoformat(value)
    return RunRecord(**fields)


def pending(root: Path, source: str, *, dataset: str | None = None) -> list[Pending]:
    """The kept finishes of ``source`` (in ``dataset`` when given), oldest run first."""
    folder = outbox_dir(root)
    try:
        files = sorted(folder.glob("*.json"))
    except OSError:
        return []
    found: list[Pending] = []
    for path in files:
        try:
            data = json.loads(path.read_text("utf-8"))
            entry = Pending(str(data["sink"]), _record(data["record"]), path)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("ledger.outbox_unreadable", path=str(path), error=str(exc)[:200])
            continue
        if entry.record.source_section == source and dataset in (None, entry.record.dataset):
            found.append(entry)
    return sorted(found, key=lambda p: p.record.started_at)


def flush(
    root: Path,
    sinks: Sequence[tuple[str, LedgerSink]],
    source: str,
    *,
    dataset: str | None = None,
) -> list[RunRecord]:
    """Write ``source``'s kept finishes to the sinks that refused them; the written ones are
    removed from the outbox and returned. A sink that still refuses keeps its entry."""
    written: list[RunRecord] = []
    by_name = dict(sinks)
    for entry in pending(root, source, dataset=dataset):
        sink = by_name.get(entry.sink)
        if sink is None:
            continue
        try:
            sink.finish(entry.record)
        except Exception as exc:  # still unreachable: kept for the next command
            log.debug("ledger.outbox_still_refused", run_id=entry.record.run_id,
                      error=redact(f"{type(exc).__name__}: {exc}")[:300])  # fmt: skip
            continue
        try:
            entry.path.unlink(missing_ok=True)
        except OSError:  # a read-only project: the write is done, the update is a no-op next
            pass
        written.append(entry.record)
        log.info("ledger.outbox_flushed", run_id=entry.record.run_id, sink=entry.sink)
    return written


def overlay(root: Path, runs: list[RunRecord], source: str, *, dataset: str) -> list[RunRecord]:
    """``runs`` of ``source`` with each ``running`` row replaced by its kept finish, where there
    is one: what ``status`` and ``runs show`` show while the ledger has not taken the write (a
    local read, no round trip; none at all when no row is running)."""
    if not any(r.status == RunStatus.running for r in runs):
        return runs
    kept = pending(root, source, dataset=dataset)
    finishes = {(p.record.run_id, p.record.started_at): p.record for p in kept}
    return [
        finishes.get((r.run_id, r.started_at), r) if r.status == RunStatus.running else r
        for r in runs
    ]
