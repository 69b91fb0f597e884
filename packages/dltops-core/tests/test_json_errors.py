"""With ``--json``, an expected error is also one JSON document on stdout (scripts parse stdout),
unless the command already printed its document there."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CLI = "import sys; sys.argv = ['dlt-ops', *sys.argv[1:]]; from dlt_ops.cli import main; main()"
CONFIG = '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "ds"\n'


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", CLI, *args], cwd=root, capture_output=True,
                          text=True, check=False)  # fmt: skip


def test_json_commands_print_a_json_error_document(tmp_path: Path) -> None:
    (tmp_path / ".dlt").mkdir()
    (tmp_path / ".dlt" / "config.toml").write_text(CONFIG)
    for args in (("pipeline", "status", "-s", "nope", "--json"),
                 ("runs", "show", "nope", "--json"),
                 ("backfill", "show", "nope", "--json")):  # fmt: skip
        proc = _cli(tmp_path, *args)
        assert proc.returncode in (1, 2), (args, proc.stderr)
        doc = json.loads(proc.stdout)
        assert doc["exit_code"] == proc.returncode and doc["type"].endswith("Error"), doc
        assert doc["error"] in proc.stderr  # the same one line as on stderr
    proc = _cli(tmp_path, "pipeline", "status", "-s", "nope")
    assert proc.stdout == ""  # without --json stdout stays empty
