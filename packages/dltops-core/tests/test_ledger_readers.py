"""``source_ledger`` and ``reading_lane`` on a real DuckDB project: a source's configured sinks,
read through the pool's session, the destination sink only where an adapter serves it."""

from __future__ import annotations

from pathlib import Path

import pytest
from structlog.testing import capture_logs

from dlt_ops.config import ProjectConfig, load_project_config
from dlt_ops.destinations import ResolvedDestination
from dlt_ops.ledger.jsonl_sink import JsonlLedgerSink
from dlt_ops.ledger.model import RunStatus
from dlt_ops.ledger.readers import reading_lane, source_ledger
from dlt_ops.ledger.sinks import LedgerQuery
from dlt_ops.plugins import PluginRegistry
from dlt_ops.target.sessions import SessionPool
from dlt_ops.testing.ledger_sinks import make_run


def _project(root: Path) -> ProjectConfig:
    (root / ".dlt").mkdir(parents=True)
    (root / ".dlt" / "config.toml").write_text(
        '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "raw"\n'
        'ledger_sinks = ["destination", "jsonl"]\n\n'
        '[destination.duckdb]\ncredentials = "ledger.duckdb"\n'
    )
    return load_project_config(root)


WHERE = ResolvedDestination(engine="duckdb", dataset="raw", pipeline_name="src_pipeline")


@pytest.fixture(scope="module")
def registry() -> PluginRegistry:
    return PluginRegistry()


def test_a_source_ledger_reads_what_its_sinks_hold_through_the_pool(
    tmp_path: Path, registry: PluginRegistry
) -> None:
    config = _project(tmp_path)
    run = make_run("src", pipeline_name="src_pipeline", destination="duckdb", dataset="raw")
    with SessionPool(registry, config, read_only=False) as pool:  # a writer, to seed the ledger
        for _, sink in source_ledger(registry, config, WHERE, pool).sinks:
            sink.start(run)
            sink.finish(run.replace(status=RunStatus.completed, completed_at=run.started_at))
    with SessionPool(registry, config) as pool:
        ledger = source_ledger(registry, config, WHERE, pool)
        assert ledger.where is pool.target(WHERE) and ledger.has_adapter
        assert [name for name, _ in ledger.sinks] == ["destination", "jsonl"]
        # a reader gets the sinks themselves, not the writer's time-bounded wrappers
        assert isinstance(dict(ledger.sinks)["jsonl"], JsonlLedgerSink)
        readers = ledger.with_method("read_runs")
        assert [name for name, _ in readers] == ["destination", "jsonl"]
        for name, sink in readers:
            stored = sink.read_runs(LedgerQuery(source="src"))
            assert [(r.run_id, r.status) for r in stored] == [(run.run_id, "completed")], name
        assert ledger.with_method("no_such_method") == []
        assert reading_lane(registry, pool, ledger) == pool.key(WHERE)


def test_a_destination_without_an_adapter_keeps_its_ledger_in_the_other_sinks(
    tmp_path: Path, registry: PluginRegistry
) -> None:
    config = _project(tmp_path)
    where = ResolvedDestination(engine="snowflake", dataset="raw", pipeline_name="src_pipeline")
    with SessionPool(registry, config) as pool, capture_logs() as logs:
        ledger = source_ledger(registry, config, where, pool)
    assert not ledger.has_adapter
    assert [name for name, _ in ledger.sinks] == ["jsonl"]
    assert logs == []  # a reader skips the destination sink without a word
