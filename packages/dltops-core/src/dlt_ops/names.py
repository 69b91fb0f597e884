"""The one check every name and path a command is given goes through (exit 2 when it fails).

A source's name becomes file names (``<source>_pipeline/``, an embedded database file, a run
lock ``<source>.lock``), a dlt pipeline name and a key in every dlt-ops table; a run id becomes a
ledger key and part of one-line messages. So a name must be one line of printable text (no NUL,
newline or other control character: it would split a one-line error or a table row, and the C
layer under a file name or a driver cuts a string at a NUL), no path (no ``/`` or ``\\``, not
``.`` or ``..``: ``clean -s ../x`` must not reach outside the project) and short enough to be a
file name with dlt's suffixes (:data:`MAX_NAME_BYTES`). A path (``--root``) must be one line of
text too, with no component longer than the file system allows.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

from dlt_ops.errors import InvalidNameError

#: The longest name, in UTF-8 bytes: file systems allow 255 per file name, and a name gets up to
#: ``_pipeline`` plus an embedded engine's file suffixes (~20) and a little more appended.
MAX_NAME_BYTES = 200
#: The longest path component (NAME_MAX on Linux and macOS) and path (PATH_MAX) accepted.
MAX_COMPONENT_BYTES = 255
MAX_PATH_BYTES = 4095

__all__ = ["InvalidNameError", "check_name", "check_path"]


def _shown(value: str) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "...'"


def _control(value: str) -> str | None:
    """What the first control character in ``value`` is, if any."""
    for char in value:
        if char == "\0":
            return "a NUL byte"
        if char in "\n\r":
            return "a line break"
        if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp"):
            return f"a control character (U+{ord(char):04X})"
    return None


def check_name(value: str, *, subject: str) -> str:
    """``value`` if it can be a name (``subject`` says which, e.g. ``source``), else an
    :class:`InvalidNameError` saying what is wrong with it."""
    if not value:
        raise InvalidNameError(f"{subject} is empty: give a name.")
    bad = _control(value)
    if bad is not None:
        raise InvalidNameError(
            f"{subject} {_shown(value)} contains {bad}: a name is one line of printable text."
        )
    if value in (".", "..") or "/" in value or "\\" in value:
        raise InvalidNameError(
            f"{subject} {_shown(value)} is a path: a name cannot contain '/' or '\\' or be "
            f"'.' or '..'."
        )
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > MAX_NAME_BYTES:
        raise InvalidNameError(
            f"{subject} {_shown(value)} is {len(value)} characters long ({size} bytes in "
            f"UTF-8); at most {MAX_NAME_BYTES} bytes (it becomes file names)."
        )
    return value


def check_path(value: str | Path, *, subject: str) -> Path:
    """``value`` as a ``Path`` if it can be one (one line, components and the whole within the
    file system's limits), else an :class:`InvalidNameError`."""
    text = str(value)
    bad = _control(text)
    if bad is not None:
        raise InvalidNameError(f"{subject} {_shown(text)} contains {bad}.")
    if len(text.encode("utf-8", "surrogateescape")) > MAX_PATH_BYTES:
        raise InvalidNameError(
            f"{subject} {_shown(text)} is longer than {MAX_PATH_BYTES} bytes, the longest path "
            f"the file system takes."
        )
    for part in Path(text).parts:
        if len(part.encode("utf-8", "surrogateescape")) > MAX_COMPONENT_BYTES:
            raise InvalidNameError(
                f"{subject} {_shown(text)} has a component longer than {MAX_COMPONENT_BYTES} "
                f"bytes ({_shown(part)}), the longest file name the file system takes."
            )
    return Path(text)
