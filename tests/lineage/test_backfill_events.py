"""A 3-chunk backfill: each chunk is its own OpenLineage run, a child of the backfill."""

from __future__ import annotations

import json

from dlt_ops.backfill.plan import BackfillPlan
from dlt_ops.lineage.ids import backfill_uuid, run_uuid
from tests.backfill.conftest import build_project
from tests.lineage.conftest import lineage_config, validate

FROM, TO = "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z"


def test_each_chunk_sends_start_and_complete_under_the_backfill(tmp_path, receiver) -> None:  # noqa: ANN001
    project = build_project(tmp_path / "proj", "duckdb")
    config = project.root / ".dlt" / "config.toml"
    config.write_text(config.read_text() + lineage_config(receiver.url))
    env = {"BF_ROWS_PER_DAY": "2"}
    args = ("pipeline", "backfill", "daily", "--from", FROM, "--to", TO, "--chunk", "1d")
    run = project.cli(*args, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    events = [validate(e) for e in receiver.wait_for(6)]
    bid = BackfillPlan.build("daily", FROM, TO, "1d").backfill_id
    shown = json.loads(project.cli("backfill", "show", bid, "--json").stdout)
    chunk_runs = {c["run_id"] for c in shown["chunks"]}
    assert len(chunk_runs) == 3
    by_run = {run_uuid(r): r for r in chunk_runs}
    assert {e.run.runId for e in events} == set(by_run)
    for event in events:
        parent = event.run.facets["parent"]
        assert parent.run.runId == backfill_uuid(bid)
        assert (parent.job.namespace, parent.job.name) == ("proj", "daily.backfill")
        assert event.run.facets["nominalTime"].nominalStartTime.startswith("2026-01-0")
    completes = [e for e in events if e.eventType.value == "COMPLETE"]
    assert len(completes) == 3 and all(
        sum(1 for e in events if e.run.runId == c.run.runId) == 2 for c in completes
    )
    for event in completes:
        receipt = json.loads(project.cli("runs", "show", by_run[event.run.runId], "--json").stdout)
        (row,) = receipt["receipt"]
        (output,) = event.outputs
        assert output.name == "bf_data.events"
        assert output.outputFacets["outputStatistics"].rowCount == row["rows_loaded"] == 2
