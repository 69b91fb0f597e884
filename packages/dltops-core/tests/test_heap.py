"""The heap is frozen once, before the first extract, and only in the dlt-ops command's process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import duckdb


def _python(code: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_a_library_caller_keeps_its_heap() -> None:
    out = _python(
        """
        import gc
        from dlt_ops import heap
        print(heap.settle(), gc.get_freeze_count())
        """
    )
    assert out == "False 0"


def test_the_command_freezes_once() -> None:
    out = _python(
        """
        import gc
        from dlt_ops import heap
        heap.allow()
        first = heap.settle()
        frozen = gc.get_freeze_count()
        garbage = [object() for _ in range(1000)]
        print(first, frozen > 0, heap.settle(), gc.get_freeze_count() == frozen)
        """
    )
    assert out == "True True False True"


def test_a_cli_run_settles_before_extracting(tmp_path) -> None:  # noqa: ANN001
    """Through the real command: the source sees a frozen heap while it is extracted."""
    (tmp_path / ".dlt").mkdir()
    (tmp_path / ".dlt" / "config.toml").write_text(
        textwrap.dedent(
            """
            [dlt_ops]
            default_destination = "duckdb"
            default_dataset = "ds"

            [sources.probe.dlt_ops]
            schedule = "@daily"
            """
        )
    )
    source_dir = tmp_path / "pipe" / "source"
    source_dir.mkdir(parents=True)
    (tmp_path / "pipe" / "resource").mkdir()
    (source_dir / "probe.py").write_text(
        textwrap.dedent(
            """
            import gc

            import dlt


            @dlt.resource(name="frozen", write_disposition="replace")
            def frozen():
                yield {"count": gc.get_freeze_count()}


            @dlt.source(name="probe")
            def probe_source():
                return frozen
            """
        )
    )
    proc = subprocess.run(
        [sys.executable, "-c", "from dlt_ops.cli import run; run()", "pipeline", "run",
         "-s", "probe", "-y", "-q"],
        capture_output=True, text=True, cwd=tmp_path, check=False,
        env={**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]

    with duckdb.connect(str(tmp_path / "probe_pipeline.duckdb"), read_only=True) as con:
        [(count,)] = con.execute("SELECT count FROM ds.frozen").fetchall()
    assert count > 10_000  # start-up's objects: modules, dlt, the source
