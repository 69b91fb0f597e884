"""The Phase-2 facts cache: ``<root>/.dlt-ops/validate-facts.json``.

A source's :class:`~dlt_ops.project.facts.SourceFacts` are cached under a key that covers
everything instantiating it depends on:

* the sandbox digest of its module (the module, every other ``.py`` file of its pipeline
  directory, the dlt-ops and Python versions) and its function name;
* the installed dlt and pydantic distributions (they compute the table schema and the model);
* the config dlt can inject into it: ``.dlt/config.toml`` and ``.dlt/secrets.toml`` (project
  and dlt's global ones) without the sections of *other* sources and without the
  ``dlt_ops`` tables (dlt-ops' own keys, never passed to a source), and the environment
  variables dlt reads for it (``SOURCES__*`` and the source function's parameter names).

Only successful instantiations are cached (failures are re-checked every time, like the
sandbox's import errors). An unreadable, corrupt or foreign cache file is ignored and rewritten;
an unwritable one leaves validate uncached, never broken.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from pathlib import Path
from typing import Any

from dlt_ops import __version__
from dlt_ops.atomic_file import write_atomically
from dlt_ops.log import get_logger
from dlt_ops.project.facts import SourceFacts
from dlt_ops.project.model import STATE_DIR, Project, SourceInfo

log = get_logger(__name__)

CACHE_FILE = "validate-facts.json"
FORMAT = 3  # 2: resource facts gained builder and window_error; 3: defaulted_fields
_LIBS = ("dlt", "pydantic")


def _distributions() -> list[str]:
    """``dlt-1.31.0.dist-info``-style names of the libraries facts depend on (no imports)."""
    out = []
    for name in _LIBS:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is None or not spec.origin:
            out.append(f"{name}:absent")
            continue
        site = Path(spec.origin).parent.parent
        out += sorted(p.name for p in site.glob(f"{name}-*.dist-info")) or [spec.origin]
    return out


def _toml(path: Path) -> Any:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        import tomllib

        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return {"<unparsed>": hashlib.sha256(data).hexdigest()}


def _relevant(doc: Any, own: set[str], others: set[str]) -> Any:
    """``doc`` without other sources' sections and without ``dlt_ops`` tables."""
    if not isinstance(doc, dict):
        return doc
    out = {k: v for k, v in doc.items() if k != "dlt_ops"}
    sources = out.get("sources")
    if isinstance(sources, dict):
        kept: dict[str, Any] = {}
        for name, section in sources.items():
            if name in others and name not in own:
                continue
            if name in own and isinstance(section, dict):
                section = {k: v for k, v in section.items() if k != "dlt_ops"}
            kept[name] = section
        out["sources"] = kept
    return out


def _config_docs(root: Path) -> dict[str, Any]:
    """The project's and dlt's global config/secrets files that exist, parsed, by role."""
    data_dir = os.environ.get("DLT_DATA_DIR")
    dirs = {"project": [root / ".dlt"]}
    dirs["global"] = [Path(data_dir)] if data_dir else [Path("~/.dlt").expanduser(),
                                                        Path("/var/dlt")]  # fmt: skip
    out = {}
    for role, candidates in dirs.items():
        for name in ("config.toml", "secrets.toml"):
            docs = [d for d in (_toml(c / name) for c in candidates) if d is not None]
            if docs:
                out[f"{role}/{name}"] = docs[0]
    return out


class FactsKeys:
    """Computes facts cache keys; the project-wide inputs are read once per instance."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self._libs = _distributions()
        self._config = _config_docs(project.root)
        self._names = {n for s in project.sources.values() for n in (s.name, s.module_stem)}

    def key(self, info: SourceInfo, digest: str) -> str:
        """The cache key of ``info``'s facts; ``digest`` is its module's sandbox digest."""
        own = {info.name, info.module_stem}
        params = {p.upper() for p in info.params}
        others = {n.upper() for n in self._names - own}
        env = {}
        for name, value in os.environ.items():
            parts = name.upper().split("__")
            if parts[0] in params or (
                parts[0] == "SOURCES" and len(parts) > 1 and parts[1] not in others
            ):
                env[name] = value
        material = {
            "format": FORMAT,
            "digest": digest,
            "function": info.function_name,
            "libs": self._libs,
            "config": {
                role: _relevant(doc, own, self._names - own) for role, doc in self._config.items()
            },
            "env": env,
        }
        blob = json.dumps(material, sort_keys=True, default=repr).encode()
        return hashlib.sha256(blob).hexdigest()


class FactsCache:
    """The per-project facts cache, keyed by module path and source function."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.path = root / STATE_DIR / CACHE_FILE
        self._entries: dict[str, Any] = {}
        self._dirty = False
        try:
            data = json.loads(self.path.read_text("utf-8"))
            if data.get("version") == __version__ and data.get("format") == FORMAT:
                entries = data.get("entries")
                self._entries = entries if isinstance(entries, dict) else {}
        except (OSError, ValueError, AttributeError) as exc:
            log.debug("facts_cache.unreadable", path=str(self.path), error=str(exc))

    def _slot(self, info: SourceInfo) -> str:
        return f"{info.module_path.relative_to(self.root).as_posix()}::{info.function_name}"

    def get(self, info: SourceInfo, key: str) -> SourceFacts | None:
        """The cached facts when ``key`` still matches (``None`` for a miss or bad entry)."""
        entry = self._entries.get(self._slot(info))
        if not isinstance(entry, dict) or entry.get("key") != key:
            return None
        try:
            return SourceFacts.from_json(entry.get("facts"))
        except ValueError as exc:
            log.debug("facts_cache.bad_entry", source=info.name, error=str(exc))
            return None

    def put(self, info: SourceInfo, key: str, facts: SourceFacts | None) -> None:
        """Remember ``facts`` (``None`` forgets the source: its outcome is not cacheable)."""
        slot = self._slot(info)
        if facts is None:
            self._dirty |= self._entries.pop(slot, None) is not None
        else:
            self._entries[slot] = {"key": key, "facts": facts.to_json()}
            self._dirty = True

    def save(self) -> None:
        """Write atomically (dropping entries of deleted modules); failures are only logged."""
        if not self._dirty:
            return
        entries = {
            slot: e for slot, e in self._entries.items()
            if (self.root / slot.split("::", 1)[0]).is_file()
        }  # fmt: skip
        try:
            payload = {"version": __version__, "format": FORMAT, "entries": entries}
            write_atomically(self.path, json.dumps(payload))
        except (OSError, TypeError, ValueError) as exc:
            log.debug("facts_cache.unwritable", path=str(self.path), error=str(exc))


def remember_live_facts(project: Project, info: SourceInfo, source: Any) -> None:
    """Cache the facts of ``source``, a live instance of ``info`` a run just built.

    A run sees the source as it is now (a table added to a reflected database, say), so its
    resource list replaces whatever ``pipeline resources`` and ``-r`` would answer from the
    cache. Best effort: any failure is logged and the run goes on.
    """
    from dlt_ops.project.facts import extract
    from dlt_ops.project.sandbox import module_digest

    try:
        digest = module_digest(project.root, info.pipeline_dir, info.module_path)
        cache = FactsCache(project.root)
        cache.put(info, FactsKeys(project).key(info, digest), extract(source))
        cache.save()
    except Exception as exc:  # noqa: BLE001 - bookkeeping never fails a run
        log.debug("facts_cache.run_refresh_failed", source=info.name, error=str(exc))
