"""``--workers N`` forks its workers from a fork server that imported dlt once (issue 33).

Counted, not timed: with ``PYTHONPROFILEIMPORTTIME=1`` every interpreter that imports
``dlt.pipeline`` itself reports it on stderr. A worker started as ``python -m
dlt_ops.backfill.workers`` (the previous design) imported it again, so ``--workers 3`` reported
it four times; forked workers start with it imported, so only the command and its fork server
report it, whatever N is.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.backfill.conftest import build_project
from tests.conftest import imported_modules

FROM, TO = "2026-01-01T00:00:00Z", "2026-01-07T00:00:00Z"  # 6 daily chunks
ARGS = ("pipeline", "backfill", "daily", "--from", FROM, "--to", TO, "--chunk", "1d")


def _imports(stderr: str, module: str = "dlt.pipeline") -> int:
    """How many interpreters imported ``module`` themselves."""
    return sum(
        1
        for line in stderr.splitlines()
        if line.startswith("import time:") and line.rsplit("|", 1)[1].strip() == module
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
    assert _imports(done.stderr) == 2, _imports(done.stderr)
    # what a worker would import on its first chunk: the adapter's driver (its
    # ``preload_modules``) and SQLAlchemy (dlt parses connection strings with it); the server
    # has them, so at most the command and the server import them
    for module in ("psycopg", "dlt.common.libs.sql_alchemy_compat", "pydantic"):
        assert _imports(done.stderr, module) <= 2, (module, _imports(done.stderr, module))


class _EntryChecks(Exception):
    """Raised by the stubbed entry checks: the test needs nothing after them."""


@pytest.mark.parametrize(
    ("engine", "workers", "expected"),
    [
        ("postgres", 3, ["fork server", "entry checks"]),
        ("postgres", 1, ["entry checks"]),  # one worker runs in this process
        ("duckdb", 3, ["entry checks"]),  # one writer per file: chunks run in this process
    ],
)
def test_the_fork_server_starts_before_the_entry_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str, workers: int,
    expected: list[str],
) -> None:  # fmt: skip
    """The server's imports (dlt, the engine's client) overlap the entry checks (importing and
    instantiating the source, the preflight), so the first worker does not wait for them."""
    from dlt_ops import isolation
    from dlt_ops.backfill import service
    from dlt_ops.backfill.executor import BackfillOptions
    from dlt_ops.backfill.plan import BackfillPlan
    from dlt_ops.config import load_project_config
    from dlt_ops.destinations import project_registry

    calls: list[str] = []
    servers: list[tuple[list[str], list[str]]] = []

    def fake_server(engines=(), modules=()):  # noqa: ANN001, ANN202
        calls.append("fork server")
        servers.append((list(engines), list(modules)))

    def fake_checks(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        calls.append("entry checks")
        raise _EntryChecks

    monkeypatch.setattr(isolation, "run_context", fake_server)
    monkeypatch.setattr(service, "check_source", fake_checks)
    root = build_project(tmp_path / "proj", engine).root
    config = load_project_config(root)
    plan = BackfillPlan.build("daily", FROM, TO, "1d", ())
    with pytest.raises(_EntryChecks):
        service.execute_backfill(
            project_registry(config), config, plan, BackfillOptions(workers=workers)
        )
    assert calls == expected
    if servers:  # preloading the engine's client and its adapter's module
        assert servers == [(["postgres"], ["dltops_postgres.adapter", "psycopg"])], servers
