"""A chunk attempt killed while dlt wrote a package leaves it half-written in the chunk's own
working directory; the retry drops that directory and re-extracts the window, no manual step."""

from __future__ import annotations

from dlt_ops.backfill.plan import BackfillPlan

FROM, TO = "2026-01-01T00:00:00Z", "2026-01-03T00:00:00Z"  # 2 daily chunks
ENV = {"BF_ROWS_PER_DAY": "5", "BF_DAYS": "3"}


def test_a_half_written_package_of_a_killed_attempt_is_dropped(duckdb_project) -> None:  # noqa: ANN001
    project = duckdb_project
    plan = BackfillPlan.build("daily", FROM, TO, "1d")
    chunk = plan.chunks[0]
    pipeline_dir = plan.working_dir(project.root, project.dataset, chunk) / "daily_pipeline"
    broken = pipeline_dir / "load" / "new" / "1764500000.123456"
    broken.mkdir(parents=True)
    (broken / "package_state.json").write_text("{}")  # no schema.json: killed mid-write
    args = ("pipeline", "backfill", "daily", "--from", FROM, "--to", TO, "--chunk", "1d")
    done = project.cli(*args, env=ENV)
    assert done.returncode == 0, done.stderr[-3000:]
    assert not broken.exists()
    per_day = project.query("SELECT day, count(*) FROM {ds}.events GROUP BY day ORDER BY day")
    assert per_day == [("2026-01-01", 5), ("2026-01-02", 5)]
    notes = project.query(
        "SELECT error_summary FROM {ds}._dlt_ops_runs WHERE run_id = ?", chunk.run_id
    )
    assert len(notes) == 1 and "1764500000.123456" in notes[0][0], notes
    assert notes[0][0].startswith("drop-pending:")
