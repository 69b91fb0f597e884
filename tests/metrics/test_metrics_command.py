"""`dlt-ops metrics` against real ledgers on DuckDB, parsed with prometheus-client's parser and
compared with SQL on the tables themselves."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta

import duckdb
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.backfill.conftest import build_project

FROM, TO = "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z"
COST = "\n[sources.daily.dlt_ops.cost]\nper_record = 0.25\n"


def samples(text: str) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """metric sample name → {sorted labels: value}, from the exposition text."""
    out: dict[str, dict[tuple[tuple[str, str], ...], float]] = defaultdict(dict)
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[s.name][tuple(sorted(s.labels.items()))] = s.value
    return out


def sql(project, query: str, sources: tuple[str, ...] = ("daily", "flat")) -> list[tuple]:  # noqa: ANN001
    """``query`` on the sources' DuckDB files (each source has its own), rows concatenated."""
    rows: list[tuple] = []
    for source in sources:
        path = project.root / f"{source}_pipeline.duckdb"
        if not path.exists():
            continue
        with duckdb.connect(str(path)) as conn:
            tables = {t for (t,) in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'bf_data'"
            ).fetchall()}  # fmt: skip
            if all(t in tables for t in ("_dlt_ops_runs",)) and (
                "_dlt_backfills" in tables or "_dlt_backfills" not in query
            ):
                rows += conn.execute(query.replace("{ds}", "bf_data")).fetchall()
    return rows


@pytest.fixture
def fleet(tmp_path):  # noqa: ANN001, ANN201
    """A backfill with a failed chunk, a retried backfill, two flat runs and a planted dead run."""
    project = build_project(tmp_path / "proj", "duckdb")
    config = project.root / ".dlt" / "config.toml"
    config.write_text(config.read_text() + COST)
    args = ("pipeline", "backfill", "daily", "--from", FROM, "--to", TO, "--chunk", "1d")
    failing = project.cli(*args, "--continue-on-error", env={"BF_FAIL_DAYS": "2026-01-02"})
    assert failing.returncode == 1, failing.stderr[-2000:]
    for _ in range(2):
        flat = project.cli("pipeline", "run", "-s", "flat", "-y")
        assert flat.returncode == 0, flat.stderr[-2000:]
    # a run whose process died long ago (`running`, its heartbeat an hour old), and a history
    # longer than one page of `pipeline status` (12 old completed runs, 5 rows each)
    old = datetime.now(UTC) - timedelta(hours=1)
    insert = (
        "INSERT INTO bf_data._dlt_ops_runs (pipeline_name, source_section, destination, dataset, "
        "run_id, trigger_source, started_at, completed_at, status, heartbeat_at, records_loaded) "
        "VALUES ('flat_pipeline', 'flat', 'duckdb', 'bf_data', ?, 'cli', ?, ?, ?, ?, ?)"
    )
    with duckdb.connect(str(project.root / "flat_pipeline.duckdb")) as conn:
        conn.execute(insert, ["deadbeefdeadbeef", old, None, "running", old, None])
        for day in range(1, 13):
            at = datetime(2025, 1, day, tzinfo=UTC)
            conn.execute(insert, [f"history{day:02d}", at, at, "completed", at, 5])
    return project


def test_runs_total_equals_the_ledger_grouped_by_source_and_status(fleet) -> None:  # noqa: ANN001
    proc = fleet.cli("metrics")
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = samples(proc.stdout)
    expected = {
        (("source", s), ("status", st)): float(n)
        for s, st, n in sql(
            fleet, "SELECT source_section, status, count(*) FROM {ds}._dlt_ops_runs GROUP BY 1, 2"
        )
    }
    assert got["dlt_ops_runs_total"] == expected
    assert {k for k, _ in expected.items() if ("status", "failed") in k}  # the failed chunk
    assert got["dlt_ops_ledger_up"] == {
        (("source", "daily"), ("state", "ok")): 1.0, (("source", "flat"), ("state", "ok")): 1.0,
    }  # fmt: skip


def test_rows_cost_chunks_and_dead_runs_match_their_tables(fleet) -> None:  # noqa: ANN001
    got = samples(fleet.cli("metrics").stdout)
    for source, rows in sql(
        fleet,
        "SELECT source_section, sum(coalesce(records_loaded, 0)) FROM {ds}._dlt_ops_runs "
        "GROUP BY 1",
    ):
        assert got["dlt_ops_rows_loaded_total"][(("source", source),)] == rows
    ((cost,),) = sql(
        fleet,
        "SELECT sum(cost_estimated) FROM {ds}._dlt_ops_receipts WHERE source_section = 'daily'",
        ("daily",),
    )
    key = (("basis", "estimated"), ("source", "daily"))
    assert got["dlt_ops_cost_dollars_total"][key] == pytest.approx(cost) and cost > 0
    chunks = {
        (("backfill_id", b), ("source", s), ("status", st)): float(n)
        for s, b, st, n in sql(
            fleet,
            "SELECT source_section, backfill_id, status, count(*) FROM {ds}._dlt_backfills "
            "GROUP BY 1, 2, 3",
        )
    }
    assert got["dlt_ops_backfill_chunks"] == chunks
    assert sorted(v for v in chunks.values()) == [1.0, 2.0]  # one failed, two completed
    assert got["dlt_ops_abandoned_runs"][(("source", "flat"),)] == 1.0
    assert got["dlt_ops_running_runs"][(("source", "flat"),)] == 0.0
    # flat's newest run is its second completed one (the dead run started an hour ago)
    outcome = got["dlt_ops_last_run_outcome"]
    assert outcome[(("outcome", "completed"), ("source", "flat"))] == 1
    assert outcome[(("outcome", "abandoned"), ("source", "flat"))] == 0
    ((newest,),) = sql(
        fleet,
        "SELECT max(started_at) FROM {ds}._dlt_ops_runs WHERE source_section = 'daily'",
        ("daily",),
    )
    start = got["dlt_ops_last_run_start_timestamp_seconds"][(("source", "daily"),)]
    assert start == pytest.approx(newest.timestamp())
    ((success,),) = sql(
        fleet,
        "SELECT max(started_at) FROM {ds}._dlt_ops_runs WHERE source_section = 'flat' "
        "AND status = 'completed'",
        ("flat",),
    )
    assert got["dlt_ops_last_success_timestamp_seconds"][(("source", "flat"),)] == pytest.approx(
        success.timestamp()
    )
    assert got["dlt_ops_seconds_since_last_success"][(("source", "flat"),)] >= 0


def test_a_source_that_never_ran_has_an_empty_ledger_not_zero_runs(tmp_path) -> None:  # noqa: ANN001
    project = build_project(tmp_path / "proj", "duckdb")
    got = samples(project.cli("metrics", "-s", "flat").stdout)
    assert got["dlt_ops_ledger_up"] == {(("source", "flat"), ("state", "missing")): 1.0}
    assert "dlt_ops_runs_total" not in got
    unknown = project.cli("metrics", "-s", "nope")
    assert unknown.returncode == 2 and "unknown source(s): nope" in unknown.stderr


def test_an_unreachable_ledger_is_down_not_zero(tmp_path) -> None:  # noqa: ANN001
    import socket

    with socket.socket() as sock:  # a port nobody listens on: the connection is refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    project = build_project(tmp_path / "proj", "postgres")
    env = {"DESTINATION__POSTGRES__CREDENTIALS": f"postgresql://u:pw@127.0.0.1:{port}/db"}
    proc = project.cli("metrics", "-s", "flat", env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = samples(proc.stdout)
    assert got["dlt_ops_ledger_up"] == {(("source", "flat"), ("state", "unreadable")): 0.0}
    assert "dlt_ops_runs_total" not in got and "dlt_ops_rows_loaded_total" not in got


def test_freshness_verdicts_are_exported(tmp_path) -> None:  # noqa: ANN001
    project = build_project(tmp_path / "proj", "duckdb")
    config = project.root / ".dlt" / "config.toml"
    text = config.read_text().replace(
        '[sources.flat.dlt_ops]\nschedule = "@daily"',
        '[sources.flat.dlt_ops]\nschedule = "@daily"\nfreshness = "1h"',
    )
    assert 'freshness = "1h"' in text
    config.write_text(text)
    assert project.cli("pipeline", "run", "-s", "flat", "-y").returncode == 0
    two_hours_ago = datetime.now(UTC) - timedelta(hours=2)
    with duckdb.connect(str(project.root / "flat_pipeline.duckdb")) as conn:
        conn.execute(
            "UPDATE bf_data._dlt_ops_runs SET started_at = ?, completed_at = ?, heartbeat_at = ?",
            [two_hours_ago, two_hours_ago, two_hours_ago],
        )
    got = samples(project.cli("metrics").stdout)
    level = got["dlt_ops_freshness_level"]
    assert level[(("level", "error"), ("source", "flat"))] == 1.0
    assert level[(("level", "ok"), ("source", "flat"))] == 0.0
    assert level[(("level", "unset"), ("source", "daily"))] == 1.0  # no SLA, never ran
    assert got["dlt_ops_seconds_since_last_success"][(("source", "flat"),)] >= 7200
