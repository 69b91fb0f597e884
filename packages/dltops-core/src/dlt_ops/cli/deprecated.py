"""dlt-ops 0.1's spellings, still accepted: each use prints one note on stderr naming ours.

The aliases are hidden (help and completion show only the current spelling); the full list,
with what changed and why, is docs/migrating-from-0.1.md.
"""

from __future__ import annotations

import typer

GUIDE = "docs/migrating-from-0.1.md"


def note(old: str, new: str) -> None:
    """Say on stderr that ``old`` is 0.1's spelling of ``new`` (stdout stays parseable)."""
    typer.echo(f"note: {old} is dlt-ops 0.1's spelling; use {new} (see {GUIDE}).", err=True)


def flag_alias(old: str, new: str) -> object:
    """A typer callback for a hidden boolean alias: note its use, keep its value."""

    def noted(value: bool) -> bool:
        if value:
            note(old, new)
        return value

    return noted
