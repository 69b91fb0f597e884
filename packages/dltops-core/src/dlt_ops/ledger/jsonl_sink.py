"""The ``jsonl`` ledger sink: one JSON line per ledger event in a local or mounted file.

It gives core-tier destinations (no adapter, no SQL) a readable ledger, and any project an
off-destination copy. Each line is a full record plus its ``event``; reading folds the lines of
one run into its latest state. Options (``[dlt_ops.ledger_sink.jsonl]``): ``path``, relative to
the project root (default ``.dlt-ops/runs.jsonl``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextlib import nullcontext
from datetime import datetime
from pathlib import Path
from typing import Any

from dlt_ops.atomic_file import write_atomically
from dlt_ops.errors import ConfigError
from dlt_ops.jsonl import append_events, read_events, rewriting
from dlt_ops.ledger.model import ALL_KEYS, RunRecord
from dlt_ops.ledger.sinks import LedgerQuery, LedgerSinkContext

DEFAULT_PATH = ".dlt-ops/runs.jsonl"
#: The ledger's own events; other features may keep their lines in the same file (receipts
#: do), and the ledger leaves them alone.
LEDGER_EVENTS = frozenset({"start", "heartbeat", "finish", "compact"})
_TIMESTAMPS = ("started_at", "completed_at", "heartbeat_at", "window_from", "window_to")


def _record(line: dict[str, Any]) -> RunRecord:
    values: dict[str, Any] = {k: line.get(k) for k in ALL_KEYS}
    for key in _TIMESTAMPS:
        if values[key] is not None:
            values[key] = datetime.fromisoformat(values[key])
    return RunRecord(**values)


def jsonl_path(options: Mapping[str, Any], project_root: Path) -> Path:
    """The file ``[dlt_ops.ledger_sink.jsonl] path`` names, relative to the project root."""
    raw = options.get("path", DEFAULT_PATH)
    if not isinstance(raw, str) or not raw:
        raise ConfigError(
            "[dlt_ops.ledger_sink.jsonl] path must be a non-empty string (a file path)."
        )
    path = Path(raw).expanduser()
    return path if path.is_absolute() else project_root / path


class JsonlLedgerSink:
    """Appends ledger events to a JSON-lines file and reads them back."""

    def __init__(self, context: LedgerSinkContext) -> None:
        self.path = jsonl_path(context.options, context.project_root)
        self.target = str(self.path)

    def _append(self, event: str, run: RunRecord) -> None:
        append_events(self.path, [{"event": event, **run.as_json()}])

    def start(self, run: RunRecord) -> None:
        """Append the start event."""
        self._append("start", run)

    def heartbeat(self, run: RunRecord) -> None:
        """Append a heartbeat event."""
        self._append("heartbeat", run)

    def finish(self, run: RunRecord) -> None:
        """Append the terminal event."""
        self._append("finish", run)

    def _lines(self) -> list[dict[str, Any]]:
        return read_events(self.path)

    def read_run(self, ref: str) -> list[RunRecord]:
        """Every attempt of the run whose id is or starts with ``ref``, newest first."""
        runs = [r for r in self._fold() or [] if r.run_id.startswith(ref)]
        return sorted(runs, key=lambda r: r.started_at, reverse=True)

    def _fold(self, lines: list[dict[str, Any]] | None = None) -> list[RunRecord] | None:
        """The latest record of every run; ``None`` when the file does not exist (``lines``:
        the file's lines when the caller has already read them)."""
        if lines is None:
            if not self.path.exists():
                return None
            lines = self._lines()
        latest: dict[tuple[str, str, str], RunRecord] = {}
        for line in lines:
            if line.get("event") not in LEDGER_EVENTS:
                continue
            try:
                record = _record(line)
            except (ValueError, TypeError):
                continue
            key = (record.run_id, record.source_section, record.started_at.isoformat())
            latest[key] = record
        return list(latest.values())

    def read_runs(self, query: LedgerQuery) -> list[RunRecord] | None:
        """Newest-first runs of ``query.source``; ``None`` when the file does not exist."""
        runs = self._fold()
        if runs is None:
            return None
        selected = [
            r
            for r in runs
            if r.source_section == query.source
            and (query.resource is None or r.resource_name == query.resource)
            and (query.status is None or r.status == query.status)
            and (query.since is None or r.started_at >= query.since)
        ]
        selected.sort(key=lambda r: r.started_at, reverse=True)
        return selected[: query.limit]

    def prune(self, older_than: datetime, *, dry_run: bool) -> int:
        """Rewrite the file without runs started before ``older_than`` (appends wait)."""
        if not self.path.exists():
            return 0
        with nullcontext() if dry_run else rewriting(self.path):
            lines = self._lines()
            runs = self._fold(lines) or []
            keep = [r for r in runs if r.started_at >= older_than]
            removed = len(runs) - len(keep)
            if removed and not dry_run:
                others = [e for e in lines if e.get("event") not in LEDGER_EVENTS]
                compacted = [{"event": "compact", **r.as_json()}
                             for r in sorted(keep, key=lambda r: r.started_at)]  # fmt: skip
                # another feature's lines stay: theirs to prune
                text = "".join(json.dumps(e) + "\n" for e in compacted + others)
                write_atomically(self.path, text)
        return removed
