"""Long commands say what they are doing on a terminal: reconcile names each source in turn."""

from __future__ import annotations

import io
from pathlib import Path

from dlt_ops.cli.spinner import spinner


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_spinner_draws_labels_on_a_terminal_only(monkeypatch) -> None:  # noqa: ANN001
    tty = _Tty()
    monkeypatch.setattr("sys.stderr", tty)
    with spinner("Reconciling") as step:
        step("orders (1/2)")
    assert "Reconciling: orders (1/2)" in tty.getvalue()
    piped = io.StringIO()
    monkeypatch.setattr("sys.stderr", piped)
    with spinner("Reconciling") as step:
        step("orders (1/2)")
    assert piped.getvalue() == ""


def test_reconcile_reports_each_source_it_starts(tmp_path: Path) -> None:
    from dlt_ops.config import load_project_config
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.reconcile.service import ReconcileRequest, reconcile

    (tmp_path / ".dlt").mkdir()
    (tmp_path / ".dlt" / "config.toml").write_text('[dlt_ops]\ndefault_destination = "duckdb"\n')
    config = load_project_config(tmp_path)
    seen: list[str] = []
    request = ReconcileRequest(sources=("a", "b"), dry_run=True)
    result = reconcile(PluginRegistry(), config, request, on_progress=seen.append)
    assert seen == ["a (1/2)", "b (2/2)"]
    assert [r.source for r in result.reports] == ["a", "b"]  # each failed on its own
