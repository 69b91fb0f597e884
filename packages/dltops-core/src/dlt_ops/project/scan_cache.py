"""Phase-1 scan results cached by file content, so unchanged modules are not re-parsed.

Parsing is the whole cost of Phase 1 (a few ms per module): a project of fifty sources paid it
on every ``run`` and ``status``. Entries are keyed by the module's bytes (SHA-1), its path and
the dlt-ops version, and live in ``<root>/.dlt-ops/scan-cache.json`` next to the other local
state. The file is data only (see :mod:`dlt_ops.project.scan_codec`): reading it never runs code,
and a missing, stale, foreign or unreadable cache is simply a miss and gets rebuilt.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from dlt_ops import __version__
from dlt_ops.atomic_file import write_atomically
from dlt_ops.log import get_logger
from dlt_ops.project.ast_scan import scan_text
from dlt_ops.project.model import (
    STATE_DIR,
    CallSite,
    ContractDecl,
    IncrementalDecl,
    ModuleFacts,
    ResourceDef,
    SourceDecl,
)
from dlt_ops.project.scan_codec import CacheFormatError, encode, loads

log = get_logger(__name__)

CACHE_NAME = "scan-cache.json"
_FORMAT = 2  # bump when the encoding changes (2: call sites carry the helper's name)


class ScanCache:
    """Read-through cache of :func:`scan_text` for one project root."""

    def __init__(self, root: Path) -> None:
        self.path = root / STATE_DIR / CACHE_NAME
        self._entries: dict[str, ModuleFacts] = {}
        self._dirty = False
        try:
            self._entries = _load(self.path.read_bytes())
        except (OSError, ValueError, RecursionError) as exc:
            # no cache yet, one from another version, or not ours at all: rebuild it
            log.debug("discovery.cache_ignored", path=str(self.path), reason=str(exc)[:200])

    def scan(self, path: Path) -> ModuleFacts:
        """Facts about ``path``, parsed only when its content changed."""
        try:
            data = path.read_bytes()
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            return ModuleFacts(path, error=f"module could not be read: {exc}")
        key = f"{path}\0{hashlib.sha1(data).hexdigest()}"
        facts = self._entries.get(key)
        if facts is None or facts.path != path:
            facts = scan_text(path, text)
            self._entries[key] = facts
            self._dirty = True
        return facts

    def save(self, keep: set[Path]) -> None:
        """Persist entries of the modules seen in this scan (atomic, best-effort)."""
        if not self._dirty:
            return
        entries: dict[str, Any] = {}
        for key, facts in self._entries.items():
            if facts.path not in keep:
                continue
            try:
                entries[key] = encode(facts)
            except CacheFormatError:  # e.g. a bytes literal in schema_contract=: parse it each time
                continue
        document = {"format": _FORMAT, "version": __version__, "entries": entries}
        try:
            write_atomically(self.path, json.dumps(document, separators=(",", ":")))
        except OSError as exc:  # a read-only checkout still discovers, just without the cache
            log.debug("discovery.cache_not_saved", error=str(exc))


def _load(raw: bytes) -> dict[str, ModuleFacts]:
    """Entries of a cache document this version wrote; raises ``ValueError`` for anything else."""
    document = loads(raw, plain=2)  # the document and its entries map
    if not isinstance(document, dict):
        raise CacheFormatError("not a cache document")
    if document.get("format") != _FORMAT or document.get("version") != __version__:
        raise CacheFormatError("written by another version")
    entries = document.get("entries")
    if not isinstance(entries, dict):
        raise CacheFormatError("no entries")
    for facts in entries.values():
        if not _well_formed(facts):
            raise CacheFormatError("an entry is not a module's facts")
    return dict(entries)


_MEMBERS = {
    "sources": SourceDecl,
    "resources": ResourceDef,
    "contracts": ContractDecl,
    "incrementals": IncrementalDecl,
    "calls": CallSite,
}


def _well_formed(facts: object) -> bool:
    """A decoded entry has the shape :func:`scan_text` returns (typed fields, typed members)."""
    if not isinstance(facts, ModuleFacts) or not isinstance(facts.path, Path):
        return False
    if facts.error is not None and not isinstance(facts.error, str):
        return False
    return all(
        isinstance(getattr(facts, name), tuple)
        and all(isinstance(m, cls) for m in getattr(facts, name))
        for name, cls in _MEMBERS.items()
    )
