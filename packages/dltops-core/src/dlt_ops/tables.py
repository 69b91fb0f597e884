"""The one table renderer every listing uses: plain aligned text, coloured on a terminal.

A :class:`Table` lays its cells out the same way in both modes, so what a script reads from a
pipe (plain text, the layouts seed 000 pins) is exactly what a person sees on a terminal, where
``rich`` adds colour: a bold header and each status word in its colour. Lines that are not
table rows (a ``Source:`` heading, a failure reason under its run) travel with the table as
:class:`Line` objects so a whole listing renders in one pass.

Imports nothing heavy: ``rich`` loads only when a terminal gets the coloured form.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import IO, Literal

#: Status words and their colour on a terminal.
STATUS_STYLES: dict[str, str] = {
    "completed": "green",
    "ok": "green",
    "loaded": "green",
    "failed": "bold red",
    "error": "bold red",
    "unreadable": "bold red",
    "running": "cyan",
    "held": "cyan",
    "abandoned": "magenta",
    "abandoned?": "magenta",
    "pending": "dim",
    "skipped": "dim",
    "warning": "yellow",
    "stale": "yellow",
}


@dataclass(frozen=True)
class Column:
    """One column: ``width`` pads every cell to it (``None``: the widest cell or header);
    ``sep`` is what stands before the column (the table's gap when ``None``); ``status``
    colours the cell by :data:`STATUS_STYLES` on a terminal."""

    header: str
    width: int | None = None
    align: Literal["left", "right"] = "left"
    sep: str | None = None
    status: bool = False


@dataclass(frozen=True)
class Line:
    """A run of ``(text, style)`` segments; its plain form is the texts joined."""

    segments: tuple[tuple[str, str | None], ...]

    @classmethod
    def of(cls, text: str, style: str | None = None) -> Line:
        """A one-segment line."""
        return cls(((text, style),))

    @property
    def plain(self) -> str:
        """The text without styles."""
        return "".join(text for text, _ in self.segments)


@dataclass
class Table:
    """Rows of cells, each optionally followed by note lines (a reason under a failed run)."""

    columns: Sequence[Column]
    indent: str = ""
    gap: str = " "
    header: bool = True
    rows: list[tuple[tuple[str, ...], tuple[Line, ...]]] = field(default_factory=list)

    def add(self, *cells: object, notes: Iterable[str | Line] = ()) -> None:
        """Append a row (cells are shown with ``str``) and the lines that follow it."""
        if len(cells) != len(self.columns):
            raise ValueError(f"{len(cells)} cells for {len(self.columns)} columns")
        lines = tuple(n if isinstance(n, Line) else Line.of(n) for n in notes)
        self.rows.append((tuple(str(c) for c in cells), lines))

    def _widths(self) -> list[int]:
        widths = []
        for i, col in enumerate(self.columns):
            if col.width is not None:
                widths.append(col.width)
                continue
            cells = [row[i] for row, _ in self.rows]
            widths.append(max([len(col.header) if self.header else 0, *map(len, cells)]))
        return widths

    def _line(self, cells: Sequence[str], widths: Sequence[int], *, head: bool) -> Line:
        segments: list[tuple[str, str | None]] = [(self.indent, None)] if self.indent else []
        for i, (cell, col, width) in enumerate(zip(cells, self.columns, widths, strict=True)):
            if i:
                segments.append((self.gap if col.sep is None else col.sep, None))
            text = cell.rjust(width) if col.align == "right" else cell.ljust(width)
            style = "bold" if head else (STATUS_STYLES.get(cell.strip()) if col.status else None)
            segments.append((text, style))
        while len(segments) > 1 and not segments[-1][0].strip():  # no trailing blanks
            segments.pop()
        text, style = segments[-1]
        segments[-1] = (text.rstrip(), style)
        return Line(tuple(segments))

    def plain_lines(self) -> list[str]:
        """:meth:`lines` as plain text, without building their segments: a listing of a
        thousand sources renders ten thousand rows, and a pipe gets only the text. Dropping
        the blank trailing segments and stripping the last one, as :meth:`_line` does, is
        stripping the joined line."""
        widths = self._widths()
        seps = [self.gap if col.sep is None else col.sep for col in self.columns]
        seps[0] = self.indent
        right = [col.align == "right" for col in self.columns]

        def text(cells: Sequence[str]) -> str:
            return "".join([
                sep + (cell.rjust(w) if r else cell.ljust(w))
                for sep, cell, w, r in zip(seps, cells, widths, right, strict=True)
            ]).rstrip()  # fmt: skip

        out = [text([c.header for c in self.columns])] if self.header else []
        for cells, notes in self.rows:
            out.append(text(cells))
            out.extend(note.plain for note in notes)
        return out

    def lines(self) -> list[Line]:
        """The header (when shown), then each row followed by its notes."""
        widths = self._widths()
        out = (
            [self._line([c.header for c in self.columns], widths, head=True)] if self.header else []
        )
        for cells, notes in self.rows:
            out.append(self._line(cells, widths, head=False))
            out.extend(notes)
        return out


Block = Table | Line | str


def flatten(blocks: Iterable[Block]) -> list[Line]:
    """Every block as lines, in order."""
    out: list[Line] = []
    for block in blocks:
        if isinstance(block, Table):
            out.extend(block.lines())
        elif isinstance(block, Line):
            out.append(block)
        else:
            out.extend(Line.of(part) for part in block.split("\n"))
    return out


def plain(blocks: Iterable[Block]) -> str:
    """The plain text of ``blocks`` (what a pipe and ``--no-color`` get): :func:`flatten`'s
    lines, without styles."""
    out: list[str] = []
    for block in blocks:
        if isinstance(block, Table):
            out.extend(block.plain_lines())
        elif isinstance(block, Line):
            out.append(block.plain)
        else:
            out.extend(block.split("\n"))
    return "\n".join(out)


def colour_wanted(stream: IO[str] | None = None) -> bool:
    """Colour only on a terminal, and never with ``NO_COLOR`` set (no-color.org)."""
    stream = stream if stream is not None else sys.stdout
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def echo(blocks: Iterable[Block], *, err: bool = False) -> None:
    """Print ``blocks``: coloured through ``rich`` on a terminal, plain text otherwise."""
    stream = sys.stderr if err else sys.stdout
    blocks = list(blocks)
    if not colour_wanted(stream):
        stream.write(plain(blocks) + "\n")
        stream.flush()
        return
    from rich.console import Console
    from rich.text import Text

    console = Console(file=stream, highlight=False, soft_wrap=True)
    for line in flatten(blocks):
        console.print(Text.assemble(*((t, s or "") for t, s in line.segments)))
