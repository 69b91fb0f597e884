"""The reference's five-day scenario, window contract and refusals, on DuckDB and PostgreSQL."""

from __future__ import annotations

import json

import pytest

from dlt_ops.backfill.plan import BackfillPlan, chunk_run_id

FROM, TO = "2026-01-01T00:00:00Z", "2026-01-06T00:00:00Z"
DAYS = [f"2026-01-0{d}" for d in range(1, 6)]


def _backfill(project, *extra: str, env: dict[str, str] | None = None):
    return project.cli(
        "pipeline", "backfill", "daily", "--from", FROM, "--to", TO, "--chunk", "1d", *extra,
        env=env,
    )  # fmt: skip


def _chunks(project, backfill_id: str) -> dict[str, tuple[str, int]]:
    rows = project.query(
        "SELECT chunk_id, status, attempts FROM {ds}._dlt_backfills WHERE backfill_id = ?",
        backfill_id,
    )
    return {cid: (status, attempts) for cid, status, attempts in rows}


def _ledger(project) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for run_id, status, trigger, bid in project.query(
        "SELECT run_id, status, trigger_source, backfill_id FROM {ds}._dlt_ops_runs "
        "ORDER BY started_at"
    ):
        assert trigger == "backfill" and bid is not None
        out.setdefault(run_id, []).append(status)
    return out


def test_five_day_scenario(project) -> None:
    plan = BackfillPlan.build("daily", FROM, TO, "1d")
    bid = plan.backfill_id
    run_ids = [c.run_id for c in plan.chunks]
    assert run_ids[0] == chunk_run_id(
        "daily", plan.chunks[0].start, plan.chunks[0].end
    )  # seed 000's recipe

    # run 1: chunk 3 fails → 2 completed, 1 failed, 2 pending, exit 1
    first = _backfill(project, env={"BF_FAIL_DAYS": "2026-01-03"})
    assert first.returncode == 1, first.stderr
    assert "chunk 3/5" in first.stderr and "injected failure" in first.stderr
    tally = "2 completed, 0 skipped, 1 failed, 0 held elsewhere, 2 pending (5 chunks)"
    assert tally in first.stdout
    states = _chunks(project, bid)
    assert [states[f"{i:06d}"][0] for i in range(5)] == [
        "completed", "completed", "failed", "pending", "pending",
    ]  # fmt: skip
    ledger = _ledger(project)
    assert ledger == {run_ids[0]: ["completed"], run_ids[1]: ["completed"], run_ids[2]: ["failed"]}

    # run 2: the failed and pending chunks run, the completed ones skip; exit 0
    second = _backfill(project)
    assert second.returncode == 0, second.stderr
    assert "3 completed, 2 skipped, 0 failed" in second.stdout
    assert second.stderr.count("already completed, skipping") == 2  # progress: stderr
    assert "chunk " not in second.stdout  # stdout is the tally only
    assert _chunks(project, bid)["000002"] == ("completed", 2)  # attempts: failed + retried
    ledger = _ledger(project)
    assert ledger[run_ids[2]] == ["failed", "completed"]
    assert all(ledger[r] == ["completed"] for r in run_ids if r != run_ids[2])

    # run 3: a no-op: no new ledger rows
    third = _backfill(project)
    assert third.returncode == 0 and "0 completed, 5 skipped" in third.stdout
    assert _ledger(project) == ledger

    # the data: one row per day, each once; day 6+ (past --to) is excluded
    per_day = project.query("SELECT day, count(*) FROM {ds}.events GROUP BY day ORDER BY day")
    assert per_day == [(d, 1) for d in DAYS]


def test_chunk_spellings_share_one_backfill(duckdb_project) -> None:
    ids = {BackfillPlan.build("daily", FROM, TO, c).backfill_id for c in ("1d", "24h", "1440m")}
    assert len(ids) == 1
    assert BackfillPlan.build("daily", FROM, TO, "12h").backfill_id not in ids
    assert _backfill(duckdb_project).returncode == 0
    again = duckdb_project.cli(
        "pipeline", "backfill", "daily", "--from", FROM, "--to", TO, "--chunk", "24h"
    )
    assert again.returncode == 0 and "0 completed, 5 skipped" in again.stdout


def test_last_chunk_is_clamped_and_bounds_normalised(duckdb_project) -> None:
    done = duckdb_project.cli(
        "pipeline", "backfill", "daily", "--from", "2026-01-01T02:00:00+02:00",
        "--to", "2026-01-03T12:00:00Z", "--chunk", "1d", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["total"] == 3 and summary["covered"] is True
    bounds = duckdb_project.query(
        "SELECT chunk_from, chunk_to FROM {ds}._dlt_backfills ORDER BY chunk_id"
    )
    assert [(a.isoformat()[:19], b.isoformat()[:19]) for a, b in bounds] == [
        ("2026-01-01T00:00:00", "2026-01-02T00:00:00"),
        ("2026-01-02T00:00:00", "2026-01-03T00:00:00"),
        ("2026-01-03T00:00:00", "2026-01-03T12:00:00"),  # clamped to --to
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--from", "2026-01-01T00:00:00", "--to", TO, "--chunk", "1d"], "timezone-naive"),
        (["--from", TO, "--to", FROM, "--chunk", "1d"], "empty window"),
        (["--from", FROM, "--to", FROM, "--chunk", "1d"], "empty window"),
        (["--from", "yesterday", "--to", TO, "--chunk", "1d"], "not a parsable ISO-8601"),
        (["--from", FROM, "--to", TO, "--chunk", "0d"], "must be > 0"),
        (["--from", FROM, "--to", TO, "--chunk", "1w"], "simple <N>d / <N>h / <N>m"),
        (["--from", FROM, "--to", TO, "--chunk", "1d", "--lease", "0s"], "invalid --lease"),
    ],
)
def test_usage_errors_exit_2_and_write_nothing(duckdb_project, args, message) -> None:
    done = duckdb_project.cli("pipeline", "backfill", "daily", *args)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr
    assert not (duckdb_project.root / "daily_pipeline.duckdb").exists()


def test_refuses_resources_without_cursor(duckdb_project) -> None:
    done = duckdb_project.cli(
        "pipeline", "backfill", "flat", "--from", FROM, "--to", TO, "--chunk", "1d"
    )
    assert done.returncode == 1
    assert "without an incremental cursor" in done.stderr and "snapshot" in done.stderr
    assert not (duckdb_project.root / "flat_pipeline.duckdb").exists()


def test_refuses_core_tier_before_writing_state(duckdb_project) -> None:
    config = duckdb_project.root / ".dlt/config.toml"
    config.write_text(config.read_text().replace('"duckdb"', '"filesystem"'))
    done = _backfill(duckdb_project)
    assert done.returncode == 1
    assert "no registered DestinationAdapter" in done.stderr and "backfill" in done.stderr
    assert not list(duckdb_project.root.glob("*.duckdb"))


def test_dry_run_shows_plan_and_skips(duckdb_project) -> None:
    plan = duckdb_project.cli(
        "pipeline", "backfill", "daily", "--from", FROM, "--to", TO, "--chunk", "1d", "--dry-run"
    )
    assert plan.returncode == 0, plan.stderr
    assert plan.stdout.count("would run") == 5 and "5 to run, 0 to skip" in plan.stdout
    assert not (duckdb_project.root / "daily_pipeline.duckdb").exists()  # nothing written
    assert _backfill(duckdb_project, env={"BF_FAIL_DAYS": "2026-01-04"}).returncode == 1
    again = duckdb_project.cli(
        "pipeline", "backfill", "daily", "--from", FROM, "--to", TO, "--chunk", "1d",
        "--dry-run", "--json",
    )  # fmt: skip
    actions = [c["action"] for c in json.loads(again.stdout)["chunks"]]
    assert actions == ["skip", "skip", "skip", "run", "run"]


def test_resource_scope_max_attempts_and_continue_on_error(duckdb_project) -> None:
    flaky = {"BF_FAIL_DAYS": "2026-01-02"}
    done = _backfill(
        duckdb_project, "--resource", "events", "--continue-on-error", "--max-attempts", "2",
        env=flaky,
    )  # fmt: skip
    assert done.returncode == 1
    assert "retrying" in done.stderr and "4 completed, 0 skipped, 1 failed" in done.stdout
    bid = BackfillPlan.build("daily", FROM, TO, "1d", ["events"]).backfill_id
    assert bid != BackfillPlan.build("daily", FROM, TO, "1d").backfill_id
    assert _chunks(duckdb_project, bid)["000001"] == ("failed", 2)
    unknown = _backfill(duckdb_project, "--resource", "nope")
    assert unknown.returncode == 2 and "has no resource(s) nope" in unknown.stderr
