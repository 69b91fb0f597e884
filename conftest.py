"""Root pytest configuration shared by every package's tests."""

from __future__ import annotations

import importlib
import json
import os
import tempfile
from collections import defaultdict
from pathlib import Path
from types import ModuleType

# dlt must never phone home or write into the real home directory from the test suite.
os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
os.environ.setdefault("DLT_DATA_DIR", tempfile.mkdtemp(prefix="dltops-test-dlt-"))
# This run has read its PYTEST_ADDOPTS already; the pytest runs tests start in subprocesses (the
# plugin kits) choose their own flags and parse their output, which an inherited -v breaks.
os.environ.pop("PYTEST_ADDOPTS", None)

pytest_plugins = ["dlt_ops.testing.fixtures", "pytester"]


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated_process_state(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN202
    """Each test leaves the pytest process as it found it.

    In-process code sets ``DLT_PROJECT_DIR`` (``use_project_dir``) and other variables that
    CLI subprocesses of later tests would inherit, pointing dlt at a deleted project; and an
    in-process CLI call would configure structlog globally with cached loggers, after which
    ``capture_logs`` in a later test sees nothing. The environment is restored after every
    test; in-process, the CLI's logging set-up never caches loggers and is undone afterwards,
    its level and format settings included.
    """
    import structlog

    from dlt_ops import log

    real = log.configure_logging

    def configure_uncached(*args, **kwargs) -> None:  # noqa: ANN002, ANN003
        real(*args, **kwargs)
        structlog.configure(cache_logger_on_first_use=False)

    saved = dict(os.environ)
    monkeypatch.setattr(log, "configure_logging", configure_uncached)
    # the level an in-process CLI call set would drop a later test's debug line before
    # structlog (and capture_logs) ever sees it
    monkeypatch.setattr(log, "_settings", log._settings)
    monkeypatch.setattr(log, "_applied", log._applied)
    yield
    structlog.reset_defaults()
    os.environ.clear()
    os.environ.update(saved)


def _figures() -> ModuleType | None:
    """The fault suite's figures (tests/faults/figures.py), or ``None`` when ``tests`` is not
    importable: pytest makes it so when it collects under tests/, and one package's tests run
    from the root (``pytest packages/dltops-duckdb``) collect nothing there, so hold no figures."""
    try:
        return importlib.import_module("tests.faults.figures")
    except ModuleNotFoundError as exc:
        if exc.name not in ("tests", "tests.faults", "tests.faults.figures"):
            raise  # figures.py itself is broken: say so
        return None


#: How long each test file took in the last full run (seconds, setup and teardown included).
#: README command 2 hands files to its xdist workers longest first (``--no-loadscope-reorder``
#: keeps this order), so a slow file starts at once instead of finishing alone at the end.
#: Refresh it with ``DLTOPS_TEST_DURATIONS=tests/durations.json bash scripts/test.sh``.
DURATIONS = Path(__file__).parent / "tests" / "durations.json"
_file_seconds: defaultdict[str, float] = defaultdict(float)


def longest_files_first(items: list[pytest.Item], seconds: dict[str, float]) -> list[pytest.Item]:
    """``items`` with each file's tests kept together and in order, files by their recorded
    ``seconds``, longest first; a file with no record yet (a new one) goes first, since it
    could be slow, then the rest as collected."""
    rank = {
        path: n
        for n, path in enumerate(dict.fromkeys(item.nodeid.split("::")[0] for item in items))
    }

    def key(item: pytest.Item) -> tuple[float, int]:
        path = item.nodeid.split("::")[0]
        return -seconds.get(path, float("inf")), rank[path]

    return sorted(items, key=key)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if DURATIONS.exists():
        items[:] = longest_files_first(items, json.loads(DURATIONS.read_text())["files"])


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _file_seconds[report.nodeid.split("::")[0]] += report.duration
    if report.when == "teardown" and report.user_properties and (figures := _figures()):
        figures.collect(report.user_properties)


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = os.environ.get("DLTOPS_TEST_DURATIONS")
    if out and _file_seconds and not hasattr(session.config, "workerinput"):  # the controller
        files = {
            path: round(s, 1) for path, s in sorted(_file_seconds.items(), key=lambda kv: -kv[1])
        }
        Path(out).write_text(json.dumps({"files": files}, indent=1) + "\n")


def pytest_terminal_summary(terminalreporter) -> None:  # noqa: ANN001
    figures = _figures()
    lines = figures.summary_lines() if figures is not None else []
    if lines:
        terminalreporter.section("fault-injection figures")
        for line in lines:
            terminalreporter.write_line(line)
