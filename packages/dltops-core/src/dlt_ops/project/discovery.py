"""Phase 1 discovery: walk the project tree and scan every module's AST.

Pure and import-free: it never imports project code, never touches a destination, and depends
only on paths *relative to the project root* — not on the current directory and not on folder
names above the root (the reference skipped files under any ``tests`` path component).
"""

from __future__ import annotations

import os
from pathlib import Path

from dlt_ops.log import get_logger
from dlt_ops.project.model import (
    RESOURCE_DIR,
    SOURCE_DIR,
    ModuleFacts,
    Pipeline,
    Project,
    SourceInfo,
    UnloadableModule,
)
from dlt_ops.project.scan_cache import ScanCache

log = get_logger(__name__)


def _listing(directory: Path) -> list[os.DirEntry[str]]:
    """``directory``'s entries by name, ``[]`` when it is no readable directory. Their types
    come with the listing (no stat per entry: a project root may hold a database file per
    source)."""
    try:
        with os.scandir(directory) as entries:
            return sorted(entries, key=lambda e: e.name)
    except OSError:
        return []


def _is(entry: os.DirEntry[str], *, directory: bool) -> bool:
    """``entry`` is a directory (else a file), or a link to one; a link loop or a dangling
    link is neither (the project checks name those), as with ``Path.is_dir``/``is_file``."""
    try:
        return entry.is_dir() if directory else entry.is_file()
    except OSError:
        return False


def _py_files(directory: Path) -> list[Path]:
    return [
        directory / e.name
        for e in _listing(directory)
        if e.name.endswith(".py") and not e.name.startswith("_") and _is(e, directory=False)
    ]


def _pipeline_modules(entry: os.DirEntry[str]) -> list[Path] | str:
    """The source modules of the pipeline directory ``entry``, or why it is not one."""
    if not _is(entry, directory=True):
        return "not a directory"
    if entry.name.startswith((".", "_")):
        return "name starts with '.' or '_'"
    source_dir = Path(entry.path) / SOURCE_DIR
    if not source_dir.is_dir():
        return f"no {SOURCE_DIR}/ directory"
    return _py_files(source_dir) or f"{SOURCE_DIR}/ holds no module"


def _dedupe(names: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(names))


def discover(root: Path) -> Project:
    """Scan ``root`` (Phase 1): pipelines, sources and their static resources."""
    root = root.resolve()
    pipelines: list[Pipeline] = []
    sources: dict[str, SourceInfo] = {}
    seen: dict[str, list[Path]] = {}
    unloadable: list[UnloadableModule] = []
    rejected: list[tuple[str, str]] = []
    cache = ScanCache(root)
    scanned: set[Path] = set()
    for listed in _listing(root):
        modules = _pipeline_modules(listed)
        if isinstance(modules, str):
            if _is(listed, directory=True) and not listed.name.startswith("."):
                rejected.append((listed.name, modules))
                log.debug("discovery.dir_skipped", dir=listed.name, reason=modules)
            continue
        entry = root / listed.name
        resource_modules = tuple(cache.scan(p) for p in _py_files(entry / RESOURCE_DIR))
        for facts in resource_modules:
            if facts.error:
                log.warning("discovery.module_skipped", path=str(facts.path), error=facts.error)
        shared = [r.name for m in resource_modules if not m.error for r in m.resources]
        shared_checkpoints = any(m.uses_checkpoints for m in resource_modules)
        source_modules: list[ModuleFacts] = []
        for path in modules:
            facts = cache.scan(path)
            source_modules.append(facts)
            if facts.error:
                unloadable.append(UnloadableModule(entry.name, path, facts.error))
                continue
            own = [r.name for r in facts.resources]
            for decl in facts.sources:
                info = SourceInfo(
                    name=decl.key,
                    pipeline=entry.name,
                    pipeline_dir=entry,
                    module_path=path,
                    function_name=decl.function_name,
                    explicit_name=decl.explicit_name,
                    lineno=decl.lineno,
                    static_resources=_dedupe(own + shared),
                    uses_checkpoints=facts.uses_checkpoints or shared_checkpoints,
                    secret_defaults=decl.secret_defaults,
                    params=decl.params,
                )
                seen.setdefault(info.name, []).append(path)
                sources.setdefault(info.name, info)  # first wins; duplicates are reported
        pipelines.append(Pipeline(entry.name, entry, tuple(source_modules), resource_modules))
        scanned.update(m.path for m in (*source_modules, *resource_modules))
    cache.save(scanned)
    duplicates = tuple((n, tuple(ps)) for n, ps in sorted(seen.items()) if len(ps) > 1)
    for name, paths in duplicates:
        log.warning("discovery.duplicate_source", source=name, modules=[str(p) for p in paths])
    return Project(
        root=root,
        pipelines=tuple(pipelines),
        sources=dict(sorted(sources.items())),
        unloadable=tuple(unloadable),
        duplicates=duplicates,
        rejected_dirs=tuple(rejected),
    )
