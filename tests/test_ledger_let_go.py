"""A short run opens its single-writer DuckDB file once: the ledger keeps it through a short
extract, and dlt's load reuses the open database (a new instance is ~40-50 ms a run)."""

from __future__ import annotations

from typing import Any

import duckdb
import pytest

from dlt_ops.config import load_project_config
from dlt_ops.plugins import PluginRegistry
from dlt_ops.runner import run as run_module
from dlt_ops.runner.run import RunRequest, execute_run
from dltops_duckdb.adapter import DuckDBAdapter
from tests.conftest import EVENTS_ON_DUCKDB as CONFIG


@pytest.fixture
def opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every database the DuckDB adapter opens for writing, in order."""
    seen: list[str] = []
    original = DuckDBAdapter._open

    def counted(self: DuckDBAdapter, target: Any) -> Any:
        if not target.read_only:
            seen.append(str(target.dataset))
        return original(self, target)

    monkeypatch.setattr(DuckDBAdapter, "_open", counted)
    return seen


def test_a_run_whose_extract_ends_within_the_grace_opens_the_file_once(
    project,
    templates,
    opens: list[str],
    monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
) -> None:
    monkeypatch.setattr(run_module, "LET_GO_AFTER_S", 3600.0)  # the extract always ends first
    root = project(CONFIG, {"events_src": templates["events"]})
    outcome = execute_run(PluginRegistry(), load_project_config(root), RunRequest("events_src"))
    assert outcome.ok and outcome.record.records_loaded == 6
    assert opens == ["ds"]  # ledger start, load, ledger end and receipts on one open database
    with duckdb.connect(str(root / "events_src_pipeline.duckdb"), read_only=True) as con:
        assert con.execute("SELECT status FROM ds._dlt_ops_runs").fetchall() == [("completed",)]


def test_without_a_grace_the_file_is_let_go_for_the_extract(
    project,
    templates,
    opens: list[str],
    monkeypatch: pytest.MonkeyPatch,  # noqa: ANN001
) -> None:
    monkeypatch.setattr(run_module, "LET_GO_AFTER_S", 0.0)
    root = project(CONFIG, {"events_src": templates["events"]})
    outcome = execute_run(PluginRegistry(), load_project_config(root), RunRequest("events_src"))
    assert outcome.ok and outcome.record.records_loaded == 6
    assert len(opens) >= 2  # let go while extracting, opened again for dlt's load


class _Session:
    closed = False

    def close(self) -> None:
        self.closed = True


def _ledger_session() -> Any:
    run_session = run_module._LazySession(None, None, None)  # type: ignore[arg-type]
    ledger = run_module._LedgerSession(run_session)
    ledger.session = _Session()  # type: ignore[assignment]
    return ledger


def test_a_let_go_that_fires_after_keep_closes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The timer may already be running when the run pins the file again or hands the
    connection over (an interrupt): it must not close a connection someone now uses."""
    monkeypatch.setattr(run_module, "LET_GO_AFTER_S", 3600.0)
    from dlt_ops.ledger import LedgerWriter

    writer = LedgerWriter([], None, heartbeat_seconds=0)  # type: ignore[arg-type]
    kept, let_go = _ledger_session(), _ledger_session()
    for ledger in (kept, let_go):
        ledger.let_go_soon(writer)
    kept.keep()
    for ledger in (kept, let_go):
        ledger._let_go(writer)  # the timer firing late
    assert kept.session is not None and not kept.session.closed
    assert let_go.session is None  # nobody kept it: closed and dropped
