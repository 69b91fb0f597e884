"""Overdue by schedule (issue 37): each scheduled source's last expected slot and the next one,
whether its newest success came too long before them, in ``pipeline status`` (text and
``--json``) and ``--fail-on stale``; failures and stale sources listed first. Real CLI, DuckDB
ledgers whose timestamps are moved into the past."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest

from dlt_ops.ledger.freshness import freshness_of, slots_of
from dlt_ops.ledger.status import SourceStatus, is_stale
from tests.test_freshness import _config, _row

NOW = datetime(2026, 6, 10, 12, 30, tzinfo=UTC)

CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"

[sources.a_src.dlt_ops]
schedule = "@hourly"

[sources.b_src.dlt_ops]
schedule = "@hourly"

[sources.c_src.dlt_ops]
schedule = "@hourly"
"""


def test_slots_and_overdue_from_the_newest_success(tmp_path: Path) -> None:
    config = _config(tmp_path, 'schedule = "@hourly"')
    slots = slots_of(config, "s", NOW)
    assert slots is not None and (slots.last, slots.next, slots.prior) == (
        NOW.replace(minute=0), NOW.replace(minute=0) + timedelta(hours=1),
        NOW.replace(minute=0) - timedelta(hours=1),
    )  # fmt: skip
    three_hours = freshness_of(config, "s", [_row("completed", NOW - timedelta(hours=3))], NOW)
    assert three_hours.overdue and three_hours.slots == slots
    # the 11:00 run ended at 11:05: the 12:00 one is half an hour late, not a whole interval
    on_time = freshness_of(config, "s", [_row("completed", NOW - timedelta(minutes=90))], NOW)
    assert not on_time.overdue
    # runs that keep failing are no success; a source that never ran is not overdue yet
    failing = [_row("failed", NOW - timedelta(minutes=m)) for m in (20, 80, 140)]
    assert freshness_of(config, "s", failing, NOW).overdue
    assert not freshness_of(config, "s", [], NOW).overdue
    assert "overdue: no success since the 2026-06-10 11:00 slot" in slots.describe(True)
    manual = _config(tmp_path, 'schedule = "@manual"')
    assert slots_of(manual, "s", NOW) is None
    assert not freshness_of(manual, "s", [_row("completed", NOW - timedelta(days=3))], NOW).overdue


def test_an_sla_decides_before_the_schedule(tmp_path: Path) -> None:
    rows = [_row("completed", NOW - timedelta(hours=3))]
    lenient = _config(tmp_path, 'schedule = "@hourly"\nfreshness = "26h"')
    verdict = freshness_of(lenient, "s", rows, NOW)
    status = SourceStatus("s", "ok", runs=rows)
    assert verdict.overdue and not is_stale(status, verdict, NOW, 7, 30)
    plain = _config(tmp_path, 'schedule = "@hourly"')
    assert is_stale(status, freshness_of(plain, "s", rows, NOW), NOW, 7, 30)
    # a @monthly source that ran 20 days ago is on schedule, whatever staleness_days says
    monthly = _config(tmp_path, 'schedule = "@monthly"')
    old = [_row("completed", datetime(2026, 6, 1, 0, 5, tzinfo=UTC))]
    verdict = freshness_of(monthly, "s", old, datetime(2026, 6, 21, tzinfo=UTC))
    assert not is_stale(SourceStatus("s", "ok", runs=old), verdict,
                        datetime(2026, 6, 21, tzinfo=UTC), 7, 30)  # fmt: skip


def _backdate(root: Path, source: str, hours: float) -> None:
    then = datetime.now(UTC) - timedelta(hours=hours)
    with duckdb.connect(str(root / f"{source}_pipeline.duckdb")) as con:
        con.execute("UPDATE ds._dlt_ops_runs SET started_at = ?, completed_at = ?, "
                    "heartbeat_at = ?", [then - timedelta(minutes=1), then, then])  # fmt: skip


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.conftest import EVENTS_SOURCE, RAISING_SOURCE, write_project
    from tests.conftest import run_cli as cli

    root = write_project(tmp_path_factory.mktemp("overdue") / "proj", CONFIG, {
        "a_src": EVENTS_SOURCE, "b_src": RAISING_SOURCE, "c_src": EVENTS_SOURCE,
    })  # fmt: skip
    for source, code in (("a_src", 0), ("b_src", 1), ("c_src", 0)):
        proc = cli("pipeline", "run", "-s", source, "-y", cwd=root)
        assert proc.returncode == code, proc.stderr[-3000:]
    _backdate(root, "c_src", 3)  # an @hourly source whose last success is 3 h old
    return root


def test_status_json_and_fail_on_stale(fleet: Path, cli) -> None:  # noqa: ANN001
    proc = cli("pipeline", "status", "--json", cwd=fleet)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = {s["source"]: s for s in json.loads(proc.stdout)}
    assert [s["source"] for s in json.loads(proc.stdout)] == ["a_src", "b_src", "c_src"]
    now = datetime.now(UTC)
    c = doc["c_src"]["schedule"]
    assert c["overdue"] is True and c["schedule"] == "@hourly" and c["cron"] == "0 * * * *"
    last, nxt = datetime.fromisoformat(c["last_slot"]), datetime.fromisoformat(c["next_slot"])
    assert last <= now < nxt and nxt - last == timedelta(hours=1) and last.minute == 0
    assert doc["a_src"]["schedule"]["overdue"] is False
    assert doc["b_src"]["schedule"]["overdue"] is False  # failed once, just now: not overdue yet

    stale = cli("pipeline", "status", "--fail-on", "stale", cwd=fleet)
    assert stale.returncode == 1, stale.stdout + stale.stderr
    assert "--fail-on stale: tripped by c_src" in stale.stderr
    fine = cli("pipeline", "status", "--fail-on", "stale", "-s", "a_src", cwd=fleet)
    assert fine.returncode == 0, fine.stdout + fine.stderr
    # a filtered listing still judges by the newest success
    filtered = cli("pipeline", "status", "--fail-on", "stale", "--status", "failed", cwd=fleet)
    assert filtered.returncode == 1 and "tripped by c_src" in filtered.stderr


def test_status_text_lists_failures_then_stale_first(fleet: Path, cli) -> None:  # noqa: ANN001
    proc = cli("pipeline", "status", cwd=fleet)
    assert proc.returncode == 0, proc.stderr[-3000:]
    order = [ln.split()[1] for ln in proc.stdout.splitlines() if ln.startswith("Source: ")]
    assert order == ["b_src", "c_src", "a_src"]
    block = proc.stdout.split("Source: c_src")[1].split("Source: ")[0]
    assert "schedule @hourly: last slot " in block and "overdue: no success since" in block
    assert "overdue" not in proc.stdout.split("Source: a_src")[1]


def test_report_puts_failures_and_stale_first(fleet: Path, cli) -> None:  # noqa: ANN001
    from tests.test_report import _parse

    out = fleet / "fleet.html"
    proc = cli("report", "-o", str(out), cwd=fleet)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = _parse(out.read_text(encoding="utf-8")).found
    sections = [d for tag, d in found if tag == "section"]
    rows = [d["source"] for tag, d in found if tag == "tr" and "source" in d]
    assert [d["source"] for d in sections] == rows == ["b_src", "c_src", "a_src"]
    by_name = {d["source"]: d for d in sections}
    assert by_name["c_src"]["overdue"] == "true" and by_name["c_src"]["stale"] == "true"
    assert by_name["a_src"]["overdue"] == "false" and by_name["a_src"]["stale"] == "false"
    assert "overdue: no success since the" in out.read_text(encoding="utf-8")


def test_report_over_unreadable_ledgers_exits_1_and_counts_nothing(project, templates, cli):  # noqa: ANN001, ANN201
    from tests.test_report import _parse

    config = '[dlt_ops]\ndefault_destination = "duckdb"\ndefault_dataset = "bad-name"\n\n'
    config += '[sources.a_src.dlt_ops]\nschedule = "@hourly"\n'
    config += '[sources.b_src.dlt_ops]\nschedule = "@daily"\n'
    root = project(config, {"a_src": templates["events"], "b_src": templates["events"]})
    out = root / "fleet.html"
    proc = cli("report", "-o", str(out), cwd=root)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "no source's runs ledger could be read" in proc.stderr and out.exists()
    found = _parse(out.read_text(encoding="utf-8")).found
    cards = {d["card"] for tag, d in found if tag == "div" and "card" in d}
    assert {"completed", "failed", "unreadable"} <= cards
    html = out.read_text(encoding="utf-8")
    assert "<b>-</b>completed" in html and "<b>-</b>failed" in html and "<b>2</b>unreadable" in html
    sections = [d for tag, d in found if tag == "section"]
    assert all(d["runs"] == "-" and d["failed"] == "-" and d["overdue"] == "-" for d in sections)
