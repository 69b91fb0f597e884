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
    seen = []

    def only_this(ctx):  # noqa: ANN001, ANN202 - a 0.1 validator
        seen.append((sorted(ctx.sources), ctx.config["sources"]["events_src"], ctx.project_root))
        return [dlt_ops.ValidationError(source_name="events_src", field="f", message="custom")]

    custom = dlt_ops.validate_sources(root, validators=[only_this])
    assert [(f.source, f.message) for f in custom] == [("events_src", "custom")]  # no rule ran
    assert seen == [(["events_src"], {"dlt_ops": {"schedule": "@daily"}}, root)]


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
    assert info.config.schedule == "@daily" and info.lineno > 0  # this version's fields too
    assert not info.is_introspected  # static: nothing imported yet
    assert info.source_fn().name == "events_src"  # imported when asked for: a live @dlt.source
    assert info.is_introspected


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


def test_dlt_ops_airflow_imports_without_airflow_and_its_builders_name_the_extra() -> None:
    code = (
        "import sys\n"
        "from dlt_ops.airflow import AirflowVariableBackend, airflow_rules\n"
        "backend = AirflowVariableBackend()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'airflow'), airflow_rules())\n"
        "print(backend.secret_requests({'schedule': '@daily'}))\n"
        "print(backend.secret_requests({'airflow_var': 'EV', 'airflow_var_key': 'token'}))\n"
        "for use in (lambda: backend.get('EV'), lambda: __import__('dlt_ops.airflow',\n"
        "            fromlist=['build_backfill_dag']).build_backfill_dag,\n"
        "            lambda: __import__('dlt_ops.airflow.tasks')):\n"
        "    try:\n"
        "        use()\n"
        "    except ImportError as exc:\n"
        "        print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    hint = 'dlt_ops.airflow needs Apache Airflow 3: pip install "dltops-core[airflow]"'
    assert done.stdout.splitlines() == [
        "[] ()", "()", "(SecretRequest(ref='EV', key='token'),)", hint, hint, hint,
    ]  # fmt: skip


def test_0_1_validation_context_and_rule_spec(project, templates) -> None:  # noqa: ANN001
    import dataclasses

    from dlt_ops import RuleSpec, ValidationContext, ValidationError
    from dlt_ops.config import load_project_config
    from dlt_ops.project.discovery import discover
    from dlt_ops.validate.legacy_context import legacy_context

    ctx = ValidationContext(
        sources={}, config={"sources": {}}, project_root=Path("/p"),
        resolved_rules={"schedule_required": False}, exemptions={"a": {"r1": "vendor says so"}},
    )  # fmt: skip
    assert (ctx.sources, ctx.config, ctx.project_root) == ({}, {"sources": {}}, Path("/p"))
    assert not ctx.rule_enabled("schedule_required") and ctx.rule_enabled("other")
    assert ctx.is_exempt("a", "r1") and not ctx.is_exempt("a", "r2")
    assert not ctx.is_exempt("b", "r1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.sources = {"x": 1}  # type: ignore[misc]

    def needs_owner(ctx):  # noqa: ANN001, ANN202 - a 0.1 validator
        """Every source names an owner."""
        return [ValidationError(source_name=name, field="owner", message="no owner")
                for name in ctx.sources if ctx.rule_enabled("needs_owner")]  # fmt: skip

    rule = RuleSpec("needs_owner", needs_owner, plugin="mine")
    assert (rule.id, rule.description, rule.default_on) == (
        "needs_owner", "Every source names an owner.", True,
    )  # fmt: skip
    root = project(CONFIG, {"events_src": templates["events"]})
    config = load_project_config(root)
    ours = ValidationContext(config, discover(root), None)  # type: ignore[arg-type]
    assert [(f.source, f.field) for f in rule.check(ours)] == [("events_src", "owner")]
    assert legacy_context(config, {}).resolved_rules == {}


def test_0_1_source_info_built_by_hand() -> None:
    from dlt_ops import SourceConfig, SourceInfo

    def events_source() -> None:
        return None

    config = SourceConfig(schedule="@daily")
    live = SourceInfo(name="events", pipeline_name="web", path=Path("/p/web/source/events.py"),
                      function_name="events_source", source_fn=events_source,
                      resources=("page_views",), config=config)  # fmt: skip
    assert (live.pipeline_name, live.pipeline, live.module_stem) == ("web", "web", "events")
    assert (live.resources, live.static_resources) == (("page_views",), ("page_views",))
    assert live.config is config and live.config_section == "events"
    assert live.is_introspected and live.source_fn is events_source
    static = SourceInfo(name="events", pipeline_name="web", path=Path("/p/events.py"),
                        function_name="events_source")  # fmt: skip
    assert not static.is_introspected
    assert (static.import_error, static.import_violations, static.config) == (None, (), None)
    with pytest.raises(RuntimeError, match="has no source_fn"):
        _ = static.source_fn
    with pytest.raises(AttributeError, match="read-only"):
        static.name = "other"  # type: ignore[misc]


def test_0_1_derived_adapter_calls(tmp_path: Path) -> None:
    import dlt

    from dlt_ops.adapters.legacy_derived import DerivedCapabilities, LegacyDerivedAdapter
    from dlt_ops.destinations import (
        UnderivableDestinationError,
        derivable_destinations,
        derived_adapter,
        is_capability_derived,
        register_derived_adapter,
    )

    derivable = derivable_destinations()
    assert {"snowflake", "mssql", "redshift", "databricks"} <= set(derivable)
    assert "sqlalchemy" not in derivable and "clickhouse" not in derivable
    tsql = derived_adapter("mssql")
    assert (tsql.placeholder_style, tsql.supports_if_exists) == ("?", False)
    assert derived_adapter("redshift").placeholder_style == "%s"
    assert tsql.native_sql('INSERT INTO "ds"."cp" (a, b) VALUES (?, ?)', 2) == (
        "INSERT INTO [ds].[cp] (a, b) VALUES (?, ?)"
    )
    with pytest.raises(ValueError, match="2 placeholders for 1 parameters"):
        tsql.native_sql("SELECT ?, ?", 1)
    with pytest.raises(ValueError, match="one SQL statement"):
        tsql.native_sql("SELECT 1; DROP TABLE t", 0)
    for bad in ("bad-name", "x'); DROP TABLE t;--", "[bracket]", ""):
        with pytest.raises(ValueError, match="identifier"):
            tsql.render_identifier(bad)
    with pytest.raises(UnderivableDestinationError, match="'sqlalchemy'.*core tier"):
        derived_adapter("sqlalchemy")
    with pytest.raises(TypeError, match="derived_adapters"):
        register_derived_adapter("snowflake")
    assert is_capability_derived(tsql) and not is_capability_derived(object())

    # on a live dlt sql_client: values bound, never spliced; drop probes where IF EXISTS is not
    destination = dlt.destinations.duckdb(str(tmp_path / "db.duckdb"))
    pipeline = dlt.pipeline("compat_derived", destination=destination, dataset_name="ds",
                            pipelines_dir=str(tmp_path / "p"))  # fmt: skip
    adapter = derived_adapter("duckdb")
    no_if_exists = LegacyDerivedAdapter(DerivedCapabilities("duckdb", "duckdb", "?", False))
    hostile = "x'); DROP TABLE cp;--"
    with pipeline.sql_client() as client:
        client.create_dataset()
        adapter.execute_sql(client, 'CREATE TABLE "ds"."cp" (a VARCHAR)')
        adapter.execute_sql(client, 'INSERT INTO "ds"."cp" (a) VALUES (?)', hostile)
        rows = adapter.execute_query(client, 'SELECT a FROM "ds"."cp" WHERE a = ?', hostile)
        assert rows.fetchall() == [(hostile,)]
        assert [c.name for c in adapter.fetch_columns(client, "ds", "cp") or []] == ["a"]
        no_if_exists.drop_table_if_exists(client, "ds", "cp")
        assert adapter.fetch_columns(client, "ds", "cp") is None
        no_if_exists.drop_table_if_exists(client, "ds", "cp")  # absent: probed, nothing dropped


def test_validate_sources_returns_a_bad_config_value_as_a_finding(project, templates, cli) -> None:  # noqa: ANN001
    import dlt_ops

    bad = CONFIG + '\n[dlt_ops.rules]\nschedule_required = "off"\n'
    root = project(bad, {"events_src": templates["events"]})
    (finding,) = dlt_ops.validate_sources(root)  # 0.1 listed it; it raised nothing
    assert finding.source == "dlt_ops.rules" and not finding.is_warning
    assert "must be true or false" in finding.message and "'off'" in finding.message
    refused = cli("pipeline", "validate", cwd=root)  # the CLI keeps the config contract: exit 2
    assert refused.returncode == 2 and "must be true or false" in refused.stderr


def test_0_1_console_script_target_is_a_click_tree_tools_can_walk(project, templates) -> None:  # noqa: ANN001
    import click
    from click.testing import CliRunner

    from dlt_ops.cli.cli import cli

    def paths(command: click.Command, path: tuple[str, ...] = ()):  # noqa: ANN202
        yield path, command
        if isinstance(command, click.Group):
            for name in command.list_commands(click.Context(command)):
                yield from paths(command.commands[name], (*path, name))

    tree = dict(paths(cli))
    assert isinstance(cli, click.Group)
    assert {("pipeline", "status"), ("backfill", "list"), ("checkpoints", "cleanup")} <= set(tree)
    json_leaves = {p for p, c in tree.items() if any("--json" in o.opts for o in c.params)}
    assert ("pipeline", "status") in json_leaves and ("init",) not in json_leaves
    for path in tree:
        shown = CliRunner().invoke(cli, [*path, "--help"])
        assert shown.exit_code == 0, (path, shown.output)
        assert "Usage:" in shown.output
    root = project(CONFIG, {"events_src": templates["events"]})
    ran = CliRunner().invoke(tree[("pipeline", "list")], ["--root", str(root), "--json"])
    assert [s["name"] for s in json.loads(ran.stdout)] == ["events_src"]


def test_airflow_var_key_is_the_backends_key_not_a_config_field(tmp_path: Path) -> None:
    from dlt_ops.airflow.secret_backend import airflow_var_key
    from dlt_ops.config import SourceConfig
    from dlt_ops.config.loader import config_from_raw
    from dlt_ops.errors import ConfigValueError

    def config(**sections: dict) -> object:
        tables = {name: {"dlt_ops": ops} for name, ops in sections.items()}
        return config_from_raw(tmp_path, {"dlt_ops": {}, "sources": tables})

    assert not hasattr(SourceConfig(schedule="@daily"), "airflow_var_key")  # as 0.1 moved it
    both = config(a={"airflow_var": "V", "airflow_var_key": "token"}, b={"airflow_var": "V"})
    assert [airflow_var_key(both, s) for s in ("a", "b")] == ["token", "api_secret_key"]
    assert both.source("a").airflow_var == "V"
    with pytest.raises(ConfigValueError, match="airflow_var_key"):  # still checked as a string
        config(a={"airflow_var_key": 3})
