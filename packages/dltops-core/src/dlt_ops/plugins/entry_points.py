"""Installed entry points of the ``dlt_ops.*`` groups (and distribution versions), read from
the distributions' files.

``importlib.metadata`` answers the same question, but importing it costs ~20 ms (it loads the
``email`` package to parse METADATA files): a seventh of a whole ``pipeline status``. On the
layout every installer produces (directories on ``sys.path`` holding ``*.dist-info`` and
``*.egg-info`` folders) :func:`scan` reads each distribution's ``entry_points.txt`` itself, in
the order ``importlib.metadata.distributions()`` visits them, and the ``Name`` and ``Version``
headers of METADATA only for the distributions that declare a wanted group. Anything else on
the path (a zip archive, an ``.egg``, an import hook that finds distributions) makes it answer
``None``, and the caller asks ``importlib.metadata`` instead.
"""

from __future__ import annotations

import os
import re
import sys
from importlib.machinery import PathFinder

#: (group, name, value, distribution name, distribution version)
Found = tuple[str, str, str, str | None, str | None]

_INFO_SUFFIXES = (".dist-info", ".egg-info")


def scan(prefix: str) -> list[Found] | None:
    """Entry points whose group starts with ``prefix``; ``None`` when the path holds anything
    this reader does not handle."""
    if _other_finders():
        return None
    found: list[Found] = []
    for entry in sys.path:
        folders = _distribution_folders(entry or ".")
        if folders is None:
            return None
        for folder in folders:
            found.extend(_entry_points(folder, prefix))
    return found


def in_group(group: str) -> list[tuple[str, str, str | None]]:
    """``(name, value, distribution)`` of every entry point of exactly ``group``, read without
    importing any plugin (through :func:`scan`, else ``importlib.metadata``)."""
    found = scan(group)
    if found is not None:
        return [(name, value, dist) for g, name, value, dist, _ in found if g == group]
    from importlib.metadata import entry_points

    return [(ep.name, ep.value, ep.dist.name if ep.dist else None)
            for ep in entry_points(group=group)]  # fmt: skip


def distribution_version(name: str) -> str | None:
    """The installed version of distribution ``name`` (``None``: not installed), as
    ``importlib.metadata.version`` answers it: the first metadata folder on ``sys.path`` with
    that normalized name. Asks ``importlib.metadata`` itself where :func:`scan` would."""
    if not _other_finders():
        wanted = _normalize(name)
        for entry in sys.path:
            folders = _distribution_folders(entry or ".")
            if folders is None:
                break
            for folder in folders:
                if _folder_name(os.path.basename(folder).lower()) == wanted:
                    return _name_and_version(folder)[1]
        else:
            return None
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def _other_finders() -> bool:
    """Whether an import hook besides the path finder can find distributions."""
    return any(
        callable(getattr(finder, "find_distributions", None)) and finder is not PathFinder
        for finder in sys.meta_path
    )


def _folder_name(low: str) -> str:
    """The normalized distribution name of a lower-cased metadata folder name."""
    return _normalize(low.rpartition(".")[0].partition("-")[0])


def _distribution_folders(path: str) -> list[str] | None:
    """The metadata folders in one ``sys.path`` entry, grouped by normalized name in order of
    first appearance (as importlib.metadata's lookup groups them)."""
    if not os.path.isdir(path):
        return [] if not os.path.exists(path) else None  # a zip or other archive: not ours
    try:
        children = os.listdir(path)
    except OSError:
        return []
    grouped: dict[str, list[str]] = {}
    for child in children:
        low = child.lower()
        if low.endswith(".egg") or (path.lower().endswith(".egg") and low == "egg-info"):
            return None
        if low.endswith(_INFO_SUFFIXES):
            grouped.setdefault(_folder_name(low), []).append(os.path.join(path, child))
    return [folder for folders in grouped.values() for folder in folders]


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _read(folder: str, name: str) -> str | None:
    try:
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def _entry_points(folder: str, prefix: str) -> list[Found]:
    text = _read(folder, "entry_points.txt")
    if not text or prefix not in text:
        return []
    pairs: list[tuple[str, str, str]] = []
    group: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            group = line.strip("[]")
            continue
        if group is not None and group.startswith(prefix) and "=" in line:
            name, _, value = line.partition("=")
            pairs.append((group, name.strip(), value.strip()))
    if not pairs:
        return []
    dist, version = _name_and_version(folder)
    return [(group, name, value, dist, version) for group, name, value in pairs]


def _name_and_version(folder: str) -> tuple[str | None, str | None]:
    """``Name`` and ``Version`` from the metadata file's header block."""
    text = _read(folder, "METADATA") or _read(folder, "PKG-INFO") or ""
    headers: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            break  # the body (the long description) starts here
        key, sep, value = line.partition(":")
        if sep and key in ("Name", "Version") and key not in headers:
            headers[key] = value.strip()
    return headers.get("Name"), headers.get("Version")
