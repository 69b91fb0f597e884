"""Phase-1 scan results cached by file content, so unchanged modules are not re-parsed.

Parsing is the whole cost of Phase 1 (a few ms per module): a project of fifty sources paid it
on every ``run`` and ``status``. Entries are keyed by the module's bytes (SHA-1), its path and
the dlt-ops version, and live in ``<root>/.dlt-ops/scan-cache.pickle`` next to the other local
state. The file holds only our own dataclasses; a missing, stale or unreadable cache is simply
rebuilt.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path

import structlog

from dlt_ops import __version__
from dlt_ops.project.ast_scan import scan_text
from dlt_ops.project.model import STATE_DIR, ModuleFacts

log = structlog.get_logger(__name__)

CACHE_NAME = "scan-cache.pickle"


class ScanCache:
    """Read-through cache of :func:`scan_text` for one project root."""

    def __init__(self, root: Path) -> None:
        self.path = root / STATE_DIR / CACHE_NAME
        self._entries: dict[str, ModuleFacts] = {}
        self._dirty = False
        try:
            with open(self.path, "rb") as handle:
                version, entries = pickle.load(handle)
            if version == __version__ and isinstance(entries, dict):
                self._entries = entries
        except (OSError, EOFError, ValueError, TypeError, pickle.UnpicklingError, AttributeError):
            pass  # no cache yet, or one from another version: rebuild it

    def scan(self, path: Path) -> ModuleFacts:
        """Facts about ``path``, parsed only when its content changed."""
        try:
            data = path.read_bytes()
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            return ModuleFacts(path, error=f"module could not be read: {exc}")
        key = f"{path}\0{hashlib.sha1(data).hexdigest()}"
        facts = self._entries.get(key)
        if facts is None:
            facts = scan_text(path, text)
            self._entries[key] = facts
            self._dirty = True
        return facts

    def save(self, keep: set[Path]) -> None:
        """Persist entries of the modules seen in this scan (atomic, best-effort)."""
        if not self._dirty:
            return
        entries = {k: v for k, v in self._entries.items() if v.path in keep}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
            with open(tmp, "wb") as handle:
                pickle.dump((__version__, entries), handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, self.path)
        except OSError as exc:  # a read-only checkout still discovers, just without the cache
            log.debug("discovery.cache_not_saved", error=str(exc))
