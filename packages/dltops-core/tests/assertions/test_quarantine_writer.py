"""``_dlt_rejected`` on a real DuckDB file: every rejection lands once, with its row and reason;
a write that fails stops the run with a message that says so."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dlt_ops.adapters import ConnectionTarget, DestinationSession, Statement
from dlt_ops.assertions.quarantine import (
    CHUNK_ROWS,
    QuarantineWriter,
    Rejected,
    params_json,
    row_json,
)
from dlt_ops.errors import QuarantineWriteError

ALL = Statement(
    "SELECT pipeline_name, source_section, resource_name, run_id, assertion_type, "
    "assertion_params, violation, rejected_at, row_json FROM {_dlt_rejected} ORDER BY row_json"
)


@pytest.fixture
def session(tmp_path: Path) -> Iterator[DestinationSession]:
    from dltops_duckdb.adapter import DuckDBAdapter

    target = ConnectionTarget("duckdb", "ds", tmp_path, credentials="q.duckdb")
    opened = DestinationSession.open(DuckDBAdapter(), target)
    yield opened
    opened.close()


def writer(session: DestinationSession) -> QuarantineWriter:
    return QuarantineWriter(lambda: session, pipeline_name="p", source="src", run_id="run-1")


def rejected(i: int) -> Rejected:
    return Rejected("events", "not_null", params_json({"column": "id"}), f"id is null ({i})",
                    row_json({"n": f"{i:04d}"}))  # fmt: skip


def test_nothing_to_write_touches_nothing(session: DestinationSession) -> None:
    assert writer(session).write([]) == 0
    assert session.fetch_columns("_dlt_rejected") is None


def test_every_rejection_lands_once_across_chunks(session: DestinationSession) -> None:
    rows = [rejected(i) for i in range(CHUNK_ROWS + 1)]
    before = datetime.now(UTC)
    assert writer(session).write(rows) == CHUNK_ROWS + 1
    stored = session.query(ALL)
    assert len(stored) == CHUNK_ROWS + 1
    first = stored[0]
    assert first[:7] == ("p", "src", "events", "run-1", "not_null", '{"column": "id"}',
                         "id is null (0)")  # fmt: skip
    assert json.loads(first[8]) == {"n": "0000"}
    at = first[7] if first[7].tzinfo else first[7].replace(tzinfo=UTC)
    assert before - timedelta(seconds=1) <= at <= datetime.now(UTC) + timedelta(seconds=1)
    assert json.loads(stored[-1][8]) == {"n": f"{CHUNK_ROWS:04d}"}


def test_a_failed_write_stops_the_run(session: DestinationSession) -> None:
    def broken() -> DestinationSession:
        raise OSError("database is locked")

    w = QuarantineWriter(broken, pipeline_name="p", source="src", run_id="run-1")
    with pytest.raises(QuarantineWriteError) as caught:
        w.write([rejected(1), rejected(2)])
    message = str(caught.value)
    assert message.startswith(
        "failed to write 2 quarantined row(s) of source 'src' to _dlt_rejected: "
        "OSError: database is locked."
    )
    assert "silent data loss" in message


def test_payloads_are_json_with_stable_params() -> None:
    when = datetime(2026, 1, 1, tzinfo=UTC)
    assert json.loads(row_json({"a": 1, "at": when})) == {"a": 1, "at": str(when)}
    assert params_json({"b": 1, "a": when}) == json.dumps({"a": str(when), "b": 1})


def test_the_write_is_logged_with_its_row_count(session: DestinationSession) -> None:
    from structlog.testing import capture_logs

    with capture_logs() as logs:
        assert writer(session).write([rejected(1), rejected(2), rejected(3)]) == 3
    assert [e for e in logs if e["event"] == "assertions.quarantined"] == [
        {"event": "assertions.quarantined", "rows": 3, "table": "_dlt_rejected",
         "log_level": "info"}
    ]  # fmt: skip


def test_rejected_at_is_utc_under_another_local_zone(
    session: DestinationSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    monkeypatch.setenv("TZ", "Asia/Kathmandu")  # +05:45: no whole-hour coincidence
    time.tzset()
    try:
        before = datetime.now(UTC)
        writer(session).write([rejected(1)])
        (stored,) = session.query(ALL)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    at = stored[7] if stored[7].tzinfo else stored[7].replace(tzinfo=UTC)
    assert before - timedelta(seconds=5) <= at <= datetime.now(UTC) + timedelta(seconds=5)
