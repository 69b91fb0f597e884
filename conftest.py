"""Root pytest configuration shared by every package's tests."""

from __future__ import annotations

import os
import tempfile

# dlt must never phone home or write into the real home directory from the test suite.
os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
os.environ.setdefault("DLT_DATA_DIR", tempfile.mkdtemp(prefix="dltops-test-dlt-"))

pytest_plugins = ["dlt_ops.testing.fixtures", "pytester"]
