"""A backfill prepares once for the whole command; every chunk reuses it (in-process)."""

from __future__ import annotations

import types

from dlt_ops import hookimpl
from dlt_ops.backfill.executor import BackfillOptions
from dlt_ops.backfill.plan import BackfillPlan
from dlt_ops.backfill.service import execute_backfill
from dlt_ops.config import load_project_config
from dlt_ops.plugins import PluginRegistry


def _counter() -> tuple[types.ModuleType, dict[str, int]]:
    seen = {"prepared": 0, "gate_factories": 0, "runs": 0}
    mod = types.ModuleType("counting_lifecycle_plugin")

    @hookimpl
    def dlt_ops_prepare_run(prepared):  # noqa: ANN001, ANN202
        seen["prepared"] += 1

    @hookimpl
    def dlt_ops_extract_gates(prepared):  # noqa: ANN001, ANN202
        seen["gate_factories"] += 1

    @hookimpl
    def dlt_ops_run_started(run):  # noqa: ANN001, ANN202
        seen["runs"] += 1

    mod.dlt_ops_prepare_run = dlt_ops_prepare_run
    mod.dlt_ops_extract_gates = dlt_ops_extract_gates
    mod.dlt_ops_run_started = dlt_ops_run_started
    return mod, seen


def test_three_chunks_one_preparation(duckdb_project, monkeypatch) -> None:  # noqa: ANN001
    import dlt_ops.project.introspect as introspect

    monkeypatch.setenv("BF_DAYS", "3")
    real_load = introspect.load_source
    imports: list[str] = []

    def counting_load(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        imports.append(args[2])
        return real_load(*args, **kwargs)

    monkeypatch.setattr(introspect, "load_source", counting_load)
    mod, seen = _counter()
    registry = PluginRegistry()
    registry.add_plugin(mod, name="counting", kind="lifecycle")
    config = load_project_config(duckdb_project.root)
    plan = BackfillPlan.build("daily", "2026-01-01T00:00:00Z", "2026-01-04T00:00:00Z", "1d", [])
    summary = execute_backfill(registry, config, plan, BackfillOptions())
    assert summary.completed == 3 and summary.covered
    assert seen == {"prepared": 1, "gate_factories": 1, "runs": 3}
    assert imports == ["daily"]  # the source module is sandbox-checked and imported once
