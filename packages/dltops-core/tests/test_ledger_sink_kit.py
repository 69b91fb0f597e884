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
