"""``--workers N`` forks its workers from a fork server that imported dlt once (issue 33).

Counted, not timed: with ``PYTHONPROFILEIMPORTTIME=1`` every interpreter that imports
``dlt.pipeline`` itself reports it on stderr. A worker started as ``python -m
dlt_ops.backfill.workers`` (the previous design) imported it again, so ``--workers 3`` reported
it four times; forked workers start with it imported, so only the command and its fork server
report it, whatever N is.
"""

from __future__ import annotations

from tests.conftest import imported_modules

FROM, TO = "2026-01-01T00:00:00Z", "2026-01-07T00:00:00Z"  # 6 daily chunks
ARGS = ("pipeline", "backfill", "daily", "--from", FROM, "--to", TO, "--chunk", "1d")


def _dlt_imports(stderr: str) -> int:
    """How many interpreters imported ``dlt.pipeline`` themselves."""
    return sum(
        1
        for line in stderr.splitlines()
        if line.startswith("import time:") and line.rsplit("|", 1)[1].strip() == "dlt.pipeline"
    )


def test_workers_do_not_import_dlt_again(postgres_project) -> None:
    env = {"BF_ROWS_PER_DAY": "2", "BF_DAYS": "8", "PYTHONPROFILEIMPORTTIME": "1"}
    done = postgres_project.cli(*ARGS, "--workers", "3", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "6 completed, 0 skipped" in done.stdout
    assert "dlt.pipeline" in imported_modules(done.stderr)  # the report was read
    holders = {
        h.rsplit("/", 1)[-1].split(":")[0]
        for (h,) in postgres_project.query("SELECT claimed_by FROM {ds}._dlt_backfills")
    }
    assert len(holders) >= 2, holders  # chunks were spread over worker processes
    # the command and its fork server; each of the 3 workers imported nothing of dlt itself
    assert _dlt_imports(done.stderr) == 2, _dlt_imports(done.stderr)
