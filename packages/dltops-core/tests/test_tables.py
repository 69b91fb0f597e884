"""The one table renderer: plain text through a pipe (the pinned layouts), colour on a terminal."""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime

import pytest

from dlt_ops.cli.status import render_blocks, render_text
from dlt_ops.ledger.model import RunRecord
from dlt_ops.ledger.status import SourceStatus
from dlt_ops.tables import Column, Table, echo, flatten, plain

NOW = datetime(2026, 1, 2, 12, 0, tzinfo=UTC)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _run(status: str, summary: str | None = None) -> RunRecord:
    started = datetime(2026, 1, 2, 10, 0, tzinfo=UTC)
    return RunRecord(
        pipeline_name="p", source_section="s", resource_name=None, destination="duckdb",
        dataset="ds", run_id="0123456789abcdef", dlt_run_id=None, backfill_id=None,
        trigger_source="cli", started_at=started, completed_at=started, status=status,
        records_extracted=6, records_loaded=6 if status == "completed" else None,
        error_summary=summary,
    )  # fmt: skip


def test_status_keeps_seed_000s_text_layout() -> None:
    statuses = [
        SourceStatus("s", "ok", runs=[_run("failed", "ValueError: boom"), _run("completed")]),
        SourceStatus("t", "missing"),
    ]
    assert render_text(statuses, NOW, 30).splitlines() == [
        "Source: s",
        "  Status     Started              Completed            Records   Trigger    "
        "Resource        Run ID",
        "  failed     2026-01-02 10:00:00  2026-01-02 10:00:00  -         cli        "
        "-               0123456789ab",
        "    ✗ ValueError: boom",
        "  completed  2026-01-02 10:00:00  2026-01-02 10:00:00  6         cli        "
        "-               0123456789ab",
        "",
        "Source: t",
        "  no runs recorded",
    ]


def test_auto_width_right_aligned_and_no_trailing_blanks() -> None:
    table = Table([Column("name"), Column("n", align="right"), Column("note")], gap="  ")
    table.add("alpha", 3, "")
    table.add("b", 12345, "x", notes=["  b: why"])
    assert plain([table]).splitlines() == [
        "name       n  note",
        "alpha      3",
        "b      12345  x",
        "  b: why",
    ]
    with pytest.raises(ValueError, match="2 cells for 3 columns"):
        table.add("too", "few")


def test_terminal_gets_colour_pipe_and_no_color_get_plain(monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.delenv("NO_COLOR", raising=False)
    blocks = render_blocks([SourceStatus("s", "ok", runs=[_run("failed", "E: x")])], NOW, 30)
    tty = _Tty()
    monkeypatch.setattr("sys.stdout", tty)
    echo(blocks)
    coloured = tty.getvalue()
    assert ANSI.search(coloured), coloured
    assert ANSI.sub("", coloured).rstrip("\n") == plain(blocks)  # same layout, only colour added
    piped = io.StringIO()
    monkeypatch.setattr("sys.stdout", piped)
    echo(blocks)
    assert piped.getvalue() == plain(blocks) + "\n"
    monkeypatch.setenv("NO_COLOR", "1")
    tty = _Tty()
    monkeypatch.setattr("sys.stdout", tty)
    echo(blocks)
    assert not ANSI.search(tty.getvalue())


@pytest.mark.parametrize("indent", ["", "  ", "│ "])
def test_the_plain_text_is_the_coloured_lines_without_their_styles(indent: str) -> None:
    """``plain`` renders tables without building styled segments; what it prints must be the
    styled lines' text exactly (blank trailing cells, separators, alignments, note lines)."""
    table = Table(
        [Column("A", 4, status=True), Column("B", align="right", sep=" | "), Column("C"),
         Column("D", 3)],
        indent=indent,
    )  # fmt: skip
    table.add("ok", "12", "x", "", notes=["  a note  "])
    table.add("failed", "", "", "")
    table.add("", "", "", "")
    table.add(" ", "1234567", "wide cell", "y")
    bare = Table([Column("only")], header=False)
    bare.add("  ")
    blocks = [table, "text\nsecond", bare, table]
    assert plain(blocks) == "\n".join(
        "".join(text for text, _ in line.segments) for line in flatten(blocks)
    )
