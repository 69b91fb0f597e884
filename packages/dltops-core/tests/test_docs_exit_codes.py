"""docs/cli.md states the exit-code contract, signals included (issue 37): the codes the error
tree carries and the one an interrupted command leaves with (SIGTERM on `pipeline run` exits
130, as Ctrl-C does: tests/test_ledger_states.py sends both signals to a real run)."""

from __future__ import annotations

from pathlib import Path

from dlt_ops.errors import ConfigError, DltOpsError, InterruptedRunError, UsageError

DOC = Path(__file__).resolve().parents[3] / "docs" / "cli.md"


def _codes() -> dict[str, str]:
    text = DOC.read_text()
    assert "## Exit codes" in text, "docs/cli.md has no exit-code section"
    section = text.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|") for line in section.splitlines() if line.startswith("| `")]
    return {cells[1].strip().strip("`"): cells[2].strip() for cells in rows}


def test_exit_codes_are_documented_with_signals() -> None:
    codes = _codes()
    for error in (DltOpsError, ConfigError, UsageError, InterruptedRunError):
        assert str(error.exit_code) in codes, error.__name__
    interrupted = codes[str(InterruptedRunError.exit_code)]
    assert "SIGTERM" in interrupted and "SIGINT" in interrupted and "143" in interrupted
    assert "SIGKILL" in codes["137"]
