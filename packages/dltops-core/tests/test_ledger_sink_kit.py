"""The built-in ``jsonl`` ledger sink against the ledger-sink conformance kit."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlt_ops.ledger import LedgerSink, LedgerSinkContext
from dlt_ops.ledger.jsonl_sink import JsonlLedgerSink
from dlt_ops.ledger.sinks import LedgerSinkFactory
from dlt_ops.testing import LedgerSinkSuite
from dlt_ops.testing.ledger_sinks import make_run


class TestJsonlLedgerSink(LedgerSinkSuite):
    __test__ = True

    @pytest.fixture
    def sink_factory(self) -> LedgerSinkFactory:
        return JsonlLedgerSink


class TestJsonlLedgerSinkWithAPathOption(TestJsonlLedgerSink):
    @pytest.fixture
    def sink_context(self, tmp_path: Path) -> LedgerSinkContext:
        return LedgerSinkContext(
            name="jsonl",
            project_root=tmp_path,
            engine="kitdb",
            dataset="kit_dataset",
            full_tier=False,
            open_session=lambda: None,  # type: ignore[arg-type,return-value]
            options={"path": "ledger/kit.jsonl"},
        )

    def test_the_file_is_where_the_option_says(
        self, sink: LedgerSink, sink_context: LedgerSinkContext
    ) -> None:
        sink.start(make_run())
        assert (sink_context.project_root / "ledger" / "kit.jsonl").is_file()


# -- the kit must fail sinks that lose what they are given ---------------------------------

BROKEN_SINKS = '''
import pytest

from dlt_ops.ledger.jsonl_sink import JsonlLedgerSink
from dlt_ops.testing import LedgerSinkSuite


class DropsEveryRow(JsonlLedgerSink):
    """Accepts every call and keeps nothing; its reader finds an empty ledger."""

    def start(self, run):
        pass

    def heartbeat(self, run):
        pass

    def finish(self, run):
        pass


class DropsTheFinish(JsonlLedgerSink):
    """Keeps the start row, loses the terminal state: the run reads as running forever."""

    def finish(self, run):
        pass


class FarSide:
    def __init__(self, keep):
        self.keep, self.records = keep, []


class WriteOnly:
    """No read side; what it sends lands in ``far`` (or nowhere)."""

    def __init__(self, context, far):
        self.far, self.target = far, "far side"

    def _put(self, run):
        if self.far.keep:
            self.far.records = [r for r in self.far.records
                                if (r.run_id, r.started_at) != (run.run_id, run.started_at)]
            self.far.records.append(run)

    start = heartbeat = finish = _put


class _WriteOnlySuite(LedgerSinkSuite):
    keep = True

    @pytest.fixture
    def far(self):
        return FarSide(self.keep)

    @pytest.fixture
    def sink_factory(self, far):
        return lambda context: WriteOnly(context, far)

    @pytest.fixture
    def stored(self, far):
        return lambda: list(far.records)


class TestDropsEveryRow(LedgerSinkSuite):
    __test__ = True

    @pytest.fixture
    def sink_factory(self):
        return DropsEveryRow


class TestDropsTheFinish(TestDropsEveryRow):
    @pytest.fixture
    def sink_factory(self):
        return DropsTheFinish


class TestWriteOnlyDropping(_WriteOnlySuite):
    __test__ = True
    keep = False


class TestWriteOnlyKeeping(_WriteOnlySuite):
    __test__ = True


class TestWriteOnlyUnseen(_WriteOnlySuite):
    __test__ = True

    @pytest.fixture
    def stored(self):
        return None
'''

WRITE_TESTS = ("test_start_heartbeat_finish_accept_a_run", "test_a_failed_run_is_recorded")


@pytest.fixture(scope="module")
def broken_outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The kit run once on every sink above: ``{"TestX::test_y": outcome}``."""
    import subprocess
    import sys

    where = tmp_path_factory.mktemp("sink_kit")
    (where / "test_broken_sinks.py").write_text(BROKEN_SINKS)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-v", "--no-header"],
        cwd=where, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    outcomes = {  # -v lines: "test_broken_sinks.py::TestX::test_y PASSED  [ 3%]"
        words[0].split("::", 1)[1]: words[1]
        for words in (line.split() for line in result.stdout.splitlines())
        if len(words) > 1 and "::" in words[0] and words[1] in ("PASSED", "FAILED", "SKIPPED")
    }
    assert outcomes, result.stdout[-3000:] + result.stderr[-2000:]
    return outcomes


@pytest.mark.parametrize("suite", ["TestDropsEveryRow", "TestWriteOnlyDropping"])
@pytest.mark.parametrize("name", WRITE_TESTS)
def test_the_kit_fails_a_sink_that_drops_every_row(
    broken_outcomes: dict[str, str], suite: str, name: str
) -> None:
    assert broken_outcomes[f"{suite}::{name}"] == "FAILED"


def test_the_kit_fails_a_sink_that_drops_the_terminal_row(
    broken_outcomes: dict[str, str],
) -> None:
    assert broken_outcomes["TestDropsTheFinish::test_start_heartbeat_finish_accept_a_run"] == (
        "FAILED"
    )
    assert broken_outcomes["TestDropsTheFinish::test_a_failed_run_is_recorded"] == "FAILED"


def test_a_write_only_sink_is_read_back_through_stored(broken_outcomes: dict[str, str]) -> None:
    for name in (*WRITE_TESTS, "test_what_was_written_can_be_read_back"):
        assert broken_outcomes[f"TestWriteOnlyKeeping::{name}"] == "PASSED", name
    # without `stored` the kit can only check the calls are accepted, and says so
    for name in WRITE_TESTS:
        assert broken_outcomes[f"TestWriteOnlyUnseen::{name}"] == "PASSED", name
    unseen = broken_outcomes["TestWriteOnlyUnseen::test_what_was_written_can_be_read_back"]
    assert unseen == "SKIPPED"
