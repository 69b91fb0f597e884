"""The scheduler's retry bound and what each retry is told about the attempts before it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from dlt_ops.scheduler import attempt as attempts
from dlt_ops.scheduler.attempt import Attempt, Tick, with_retries
from dlt_ops.scheduler.due import Due

SLOT = datetime(2026, 3, 4, 10, tzinfo=UTC)
DUE = Due("src", "@hourly", SLOT, None, None)


@pytest.fixture(autouse=True)
def _no_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(attempts, "RETRY_PAUSES_S", (0.0, 0.0))


def test_retries_stop_at_the_bound_and_carry_the_newest_row() -> None:
    seen: list[str | None] = []
    # 1: failed inside its ledger row (run "a"); 2: refused before any row; 3: failed again
    script = [
        Attempt(Tick("src", SLOT, run_id="a", status="failed", error="env"), retry=True),
        Attempt(Tick("src", SLOT, error="unreachable"), retry=True),
        Attempt(Tick("src", SLOT, run_id="c", status="failed", error="env"), retry=True),
        Attempt(Tick("src", SLOT, run_id="d", status="completed")),
    ]

    def attempt(run_id: str, retry_of: str | None) -> Attempt:
        seen.append(retry_of)
        return script[len(seen) - 1]

    tick = with_retries(DUE, attempt)
    assert attempts.RETRIES == 2
    assert (tick.run_id, tick.attempts) == ("c", 3)  # never a fourth start
    # the third start still knows run "a" is this slot's own: the slot stays due for it
    assert seen == [None, "a", "a"]


def test_a_failure_that_is_not_retryable_is_the_slots_run() -> None:
    calls: list[str] = []

    def attempt(run_id: str, retry_of: str | None) -> Attempt:
        calls.append(run_id)
        return Attempt(Tick("src", SLOT, run_id=run_id, status="failed", error="boom"))

    tick = with_retries(DUE, attempt)
    assert (tick.attempts, len(calls), tick.run_id) == (1, 1, calls[0])
