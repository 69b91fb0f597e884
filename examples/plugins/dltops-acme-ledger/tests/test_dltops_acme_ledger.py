"""The acme_ledger ledger sink against dlt-ops' ledger-sink kit."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime

import pytest

from dlt_ops.ledger import RunRecord
from dlt_ops.testing import LedgerSinkSuite
from dltops_acme_ledger.ledger_sink import AcmeLedgerLedgerSink

STAMPS = {f.name for f in dataclasses.fields(RunRecord) if f.name.endswith("_at")}


def decode(doc):
    values = {k: datetime.fromisoformat(v) if k in STAMPS and v else v for k, v in doc.items()}
    return RunRecord(**values)


class TestAcmeLedgerLedgerSink(LedgerSinkSuite):
    __test__ = True

    @pytest.fixture
    def sink_factory(self):
        return AcmeLedgerLedgerSink

    @pytest.fixture
    def stored(self, sink_context):
        path = sink_context.project_root / ".dlt-ops" / "acme_ledger-ledger.json"

        def read():
            runs = json.loads(path.read_text()) if path.exists() else {}
            return [decode(doc) for doc in runs.values()]

        return read
