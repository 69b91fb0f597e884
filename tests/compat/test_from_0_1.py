"""What docs/migrating-from-0.1.md promises a dlt-ops 0.1 user: the spellings, names and entry
points 0.1 had keep working (an alias prints one note on stderr), and they do the real thing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"

[sources.events_src.dlt_ops]
schedule = "@daily"
"""
#: dlt-ops 0.1's `dlt_ops.__all__`
NAMES_0_1 = (
    "AlertSink", "AssertionContext", "AssertionFailedError", "AssertionType",
    "DestinationAdapter", "DriftFinding", "ReconcileResult", "Schedule", "SecretBackend",
    "SourceConfig", "SourceInfo", "ValidationContext", "ValidationError", "Validator",
    "cleanup_checkpoints", "detect_removal", "discover_sources", "drop_unknown_nulls",
    "extract_model_column_names", "list_checkpoints", "reconcile_all", "reconcile_source",
    "validate_sources", "with_checkpoints",
)  # fmt: skip
NOTE = "is dlt-ops 0.1's spelling"


def _tables(root: Path) -> set[str]:
    with duckdb.connect(str(root / "events_src_pipeline.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT table_name FROM information_schema.tables "
                           "WHERE table_schema = 'ds'").fetchall()  # fmt: skip
    return {r[0] for r in rows}


def test_names_of_0_1_resolve_lazily_without_importing_dlt() -> None:
    code = (
        "import sys, dlt_ops\n"
        f"names = {NAMES_0_1!r}\n"
        "missing = [n for n in names if n not in dlt_ops.__all__]\n"
        "before = 'dlt' in sys.modules\n"
        "values = [getattr(dlt_ops, n) for n in names]\n"
        "print(missing, before, all(v is not None for v in values))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "False", "True"]


def test_schedule_keeps_0_1_member_names() -> None:
    from dlt_ops import Schedule

    assert Schedule.DAILY is Schedule.daily and Schedule.TWO_HOURLY.value == "@2hourly"
    assert Schedule.from_string(" @weekly ") is Schedule.weekly
    assert [s.value for s in Schedule] == [
        "@hourly", "@2hourly", "@daily", "@weekly", "@monthly", "@manual",
    ]  # fmt: skip
    with pytest.raises(ValueError, match="valid: @hourly, @2hourly"):
        Schedule.from_string("@yearly")


def test_pydantic_helpers_drop_only_unknown_nulls() -> None:
    from pydantic import BaseModel, Field

    from dlt_ops import drop_unknown_nulls, extract_model_column_names

    class Event(BaseModel):
        id: int
        kind: str | None = Field(default=None, alias="type")

    assert extract_model_column_names(Event) == {"id", "kind", "type"}
    drop = drop_unknown_nulls(Event)
    assert drop({"id": 1, "type": None, "extra": None, "other": 0}) == {
        "id": 1, "type": None, "other": 0,
    }  # fmt: skip


def test_global_r_and_clean_auto_approve_work_with_a_note(project, templates, cli) -> None:  # noqa: ANN001
    root = project(CONFIG, {"events_src": templates["events"]})
    ran = cli("-r", str(root), "pipeline", "run", "-s", "events_src", "-y", cwd=root.parent)
    assert ran.returncode == 0, ran.stderr
    assert f"note: -r {root} {NOTE}; use --root {root}" in ran.stderr
    assert "events" in _tables(root)
    cleaned = cli("pipeline", "clean", "-s", "events_src", "--remote-only", "--auto-approve",
                  cwd=root)  # fmt: skip
    assert cleaned.returncode == 0, cleaned.stderr
    assert f"--auto-approve {NOTE}; use -y/--yes" in cleaned.stderr
    assert "events" not in _tables(root)


def test_0_1_console_script_target_runs_the_cli_with_its_exit_codes(
    project,
    templates,
    tmp_path: Path,  # noqa: ANN001
) -> None:
    from click.testing import CliRunner

    from dlt_ops.cli.cli import cli

    root = project(CONFIG, {"events_src": templates["events"]})
    listed = CliRunner().invoke(cli, ["--root", str(root), "pipeline", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    assert [s["name"] for s in json.loads(listed.stdout)] == ["events_src"]
    missing = CliRunner().invoke(cli, ["--root", str(tmp_path / "nowhere"), "pipeline", "list"])
    assert missing.exit_code == 2
    assert "error:" in missing.output and "Traceback" not in missing.output


def test_project_functions_of_0_1(project, templates, cli) -> None:  # noqa: ANN001
    import dlt_ops

    root = project(CONFIG, {"events_src": templates["events"]})
    sources = dlt_ops.discover_sources(root)
    assert list(sources) == ["events_src"]
    assert sources["events_src"].config_section == "events_src"
    findings = dlt_ops.validate_sources(root)
    assert findings and all(f.source_name == f.source for f in findings)
    validated = cli("pipeline", "validate", "--json", cwd=root)
    assert [f.to_json() for f in findings] == json.loads(validated.stdout)
    strict = dlt_ops.validate_sources(root, strict=True)
    assert [f.message for f in strict] == [f.message for f in findings]
    assert not any(f.is_warning for f in strict)
    with pytest.raises(TypeError, match="validation_rule plugin"):
        dlt_ops.validate_sources(root, validators=[lambda ctx: []])


def test_dir_of_dlt_ops_lists_the_lazy_names_without_importing_them() -> None:
    code = (
        "import sys, dlt_ops\n"
        "listed = set(dir(dlt_ops))\n"
        f"print(sorted(set({NAMES_0_1!r}) - listed), 'dlt' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "False"]


def test_0_1_value_objects_build_with_0_1_keywords() -> None:
    from dlt_ops import Schedule, SourceConfig, ValidationError

    plain = SourceConfig(schedule=Schedule.DAILY)
    assert (plain.name, plain.schedule, plain.dataset) == ("", Schedule.DAILY, None)
    assert not plain.is_schema_contract_evolve
    assert SourceConfig(
        schema_contract_evolve_reason="  vendor adds columns "
    ).is_schema_contract_evolve
    assert not SourceConfig(schema_contract_evolve_reason=" \t").is_schema_contract_evolve
    finding = ValidationError(source_name="orders", field="schedule", message="m", is_warning=True)
    assert finding == ValidationError("orders", "schedule", "m", True)
    assert (finding.source, finding.source_name) == ("orders", "orders")
    with pytest.raises(TypeError, match="exactly one"):
        ValidationError(source="a", source_name="b", field="f", message="m")
    with pytest.raises(ValueError, match="Invalid schedule '@yearly'"):
        Schedule.from_string("@yearly")


def test_discovered_sources_answer_to_0_1_attribute_names(project, templates) -> None:  # noqa: ANN001
    import dlt_ops

    root = project(CONFIG, {"events_src": templates["events"]})
    info = dlt_ops.discover_sources(root)["events_src"]
    assert info.pipeline_name == info.pipeline and info.pipeline_name
    assert info.path == info.module_path and info.path.is_file()
    assert info.resources == info.static_resources == ("events",)


def test_0_1_wordings_scripts_look_for(project, templates, cli) -> None:  # noqa: ANN001
    from dlt_ops import with_checkpoints
    from dlt_ops.errors import DestinationCapabilityError

    with pytest.raises(ValueError, match="frequency must be positive"):
        with_checkpoints(cursor_field="ts", frequency=0)
    with pytest.raises(ValueError, match="cleanup_days must be non-negative"):
        with_checkpoints(cursor_field="ts", cleanup_days=-1)
    refused = DestinationCapabilityError("filesystem", ["backfill"], ["backfill"], [])
    assert "feature(s): backfill (chunk state in _dlt_backfills)." in str(refused)
    root = project(CONFIG, {"events_src": templates["events"]})
    bare = cli("checkpoints", "list", cwd=root)
    assert bare.returncode == 2
    assert "Missing option '--pipeline NAME'" in bare.stderr
    ran = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    assert ran.returncode == 0, ran.stderr
    local = cli("pipeline", "clean", "-s", "events_src", "--local-only", "-y", cwd=root)
    assert local.returncode == 0, local.stderr
    assert "✓ Cleanup complete: 'events_src'" in local.stdout


def test_reconcile_on_a_core_tier_destination_says_so(project, templates, cli) -> None:  # noqa: ANN001
    config = CONFIG.replace('"duckdb"', '"filesystem"')
    root = project(config, {"events_src": templates["events"]})
    env = {"DESTINATION__FILESYSTEM__BUCKET_URL": str(root / "bucket")}
    done = cli("pipeline", "reconcile", "-s", "events_src", cwd=root, env=env)
    assert done.returncode == 1, done.stderr
    assert "has no DestinationAdapter (core tier): reconcile keeps its drift state" in (
        done.stdout + done.stderr
    )
