"""Symlinks in a pipeline directory that cannot be followed.

A symlink loop (``a.py -> b.py -> a.py``) or a module linked to nothing makes every read of the
pipeline's files fail (the import-safety digest reads them all), so ``validate`` reports each
(rule ``project_links``) and a run refuses before anything is written (exit 2). The walk never
follows a directory link, so a looping directory link is found, not entered.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from dlt_ops.errors import ProjectLinkError


def broken_links(directory: Path) -> list[tuple[Path, str]]:
    """``(path, what)`` for every symlink under ``directory`` in a loop, and every ``.py`` one
    pointing at nothing, sorted."""
    found: list[tuple[Path, str]] = []
    for dirpath, dirnames, filenames in os.walk(directory):  # never follows a directory link
        for name in (*dirnames, *filenames):
            path = Path(dirpath, name)
            if not path.is_symlink():
                continue
            try:
                os.stat(path)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    found.append((path, "is a symlink loop"))
                elif name.endswith(".py"):
                    found.append((path, "is a symlink to nothing"))
    return sorted(found)


def describe(root: Path, links: list[tuple[Path, str]]) -> str:
    """One line naming each broken link relative to ``root``, and the fix."""
    listed = "; ".join(f"{_relative(root, p)} {what}" for p, what in links)
    return f"{listed}: remove the link or point it at a file."


def check_links(root: Path, directory: Path, *, source: str) -> None:
    """Raise :class:`ProjectLinkError` (exit 2) when ``directory`` holds a broken link."""
    links = broken_links(directory)
    if links:
        raise ProjectLinkError(
            f"source '{source}' cannot run, nothing was written: {describe(root, links)}"
        )


def _relative(root: Path, path: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)
