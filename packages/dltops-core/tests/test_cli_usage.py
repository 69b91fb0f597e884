"""Usage lines name arguments in capitals (``SOURCE``), never as ``{source}``."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from dlt_ops.cli.app import app


@pytest.mark.parametrize(
    ("command", "usage"),
    [
        (["pipeline", "backfill"], "dlt-ops pipeline backfill [OPTIONS] SOURCE"),
        (["backfill", "show"], "dlt-ops backfill show [OPTIONS] BACKFILL_ID"),
        (["runs", "show"], "dlt-ops runs show [OPTIONS] RUN"),
        (["init"], "dlt-ops init [OPTIONS] [ROOT]"),
    ],
)
def test_usage_names_arguments_in_capitals(command: list[str], usage: str) -> None:
    result = CliRunner().invoke(app, [*command, "--help"], prog_name="dlt-ops")
    assert result.exit_code == 0, result.output
    assert usage in result.output, result.output
    (line,) = [ln for ln in result.output.splitlines() if "Usage:" in ln]
    assert "{" not in line, line
