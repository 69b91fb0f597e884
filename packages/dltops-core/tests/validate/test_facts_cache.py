"""The Phase-2 facts cache: a warm validate imports neither dlt nor project code, answers the
rules exactly as a cold one, and is invalidated by code, config and environment changes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from dlt_ops.project.facts_cache import CACHE_FILE

FACTS = Path(".dlt-ops") / CACHE_FILE

#: Exercises every rule that reads Phase-2 facts: a resource without a model, a dict field
#: without a json hint, a discard_value contract, a missing cursor, two sources sharing a
#: resource name, and an assertion on a column the model lacks.
RICH = """
import dlt
import pydantic

class Row(pydantic.BaseModel):
    id: int
    payload: dict[str, int] | None = None

@dlt.resource(name="rows", columns=Row, schema_contract={"columns": "discard_value"})
def rows():
    yield {"id": 1, "payload": {}}

rows._hints["columns"]["payload"]["data_type"] = "text"  # an override the json rule catches

@dlt.resource(name="raw")
def raw():
    yield {"x": 1}

@dlt.source(name="{name}")
def {name}_source(include_raw: bool = dlt.config.value):
    return [rows, raw] if include_raw else [rows]
"""
RICH_CONFIG = """
[dlt_ops.rules]
incremental_cursor_required = true
stale_sources = false  # would probe BigQuery credentials


[sources.alpha]
include_raw = true

[sources.alpha.dlt_ops]
schedule = "@daily"

[sources.alpha.dlt_ops.assertions.rows]
unique_columns = ["id", "missing_col"]

[sources.beta]
include_raw = false

[sources.beta.dlt_ops]
schedule = "@daily"
destination = "bigquery"
{extra}
"""


def _rich(make_project, extra: str = "") -> Path:
    files = {"p/source/alpha.py": RICH.replace("{name}", "alpha"),
             "p/source/beta.py": RICH.replace("{name}", "beta")}  # fmt: skip
    return make_project(files, RICH_CONFIG.format(extra=extra))


def _findings(report) -> list[tuple]:
    return [(f.source, f.field, f.message, f.is_warning, f.rule) for f in report.findings]


def _introspect(root: Path) -> dict:
    from dlt_ops.config import load_project_config
    from dlt_ops.project import discover
    from dlt_ops.project.introspect import introspect

    return introspect(discover(root), load_project_config(root), cached_facts=True)


def test_warm_findings_equal_cold_findings(make_project, run_validate) -> None:
    root = _rich(make_project)
    cold = _findings(run_validate(root))
    assert (root / FACTS).is_file()
    intro = _introspect(root)
    assert all(i.facts_cached and i.source is None and i.module is None for i in intro.values())
    warm = _findings(run_validate(root))
    assert warm == cold
    fired = {f[4] for f in cold}
    assert {"no_resource_overlap", "json_hints_for_dict_fields", "pydantic_columns_required",
            "pydantic_model_forbids_extra", "incremental_cursor_required",
            "assertion_columns_exist", "bigquery_partition_hints"} <= fired  # fmt: skip


def test_module_change_invalidates(make_project, run_validate, h) -> None:
    root = make_project({"p/source/alpha.py": h.good_source("alpha")}, h.section("alpha"))
    assert h.by_rule(run_validate(root), "pydantic_columns_required") == []
    assert h.by_rule(run_validate(root), "pydantic_columns_required") == []  # cached
    module = root / "p/source/alpha.py"
    module.write_text(module.read_text().replace(", columns=Row", ""))
    assert _introspect(root)["alpha"].facts_cached is False
    found = h.by_rule(run_validate(root), "pydantic_columns_required")
    assert [f.field for f in found] == ["resource.rows"]
    assert _introspect(root)["alpha"].facts_cached is True


def test_sibling_file_change_invalidates(make_project, run_validate) -> None:
    root = _rich(make_project)
    run_validate(root)
    (root / "p/resource").mkdir()
    (root / "p/resource/extra.py").write_text("X = 1\n")
    assert _introspect(root)["alpha"].facts_cached is False


def _cli_sources(root: Path, tmp_path: Path, rule: str, **env: str) -> set[str]:
    """Sources with ``rule`` findings from a fresh ``dlt-ops pipeline validate --json``
    process (in-process, dlt keeps the config files it read the first time)."""
    full = {**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false",
            "DLT_DATA_DIR": str(tmp_path / "dlt-data"), **env}  # fmt: skip
    full.pop("DLT_PROJECT_DIR", None)
    code = "import sys; from dlt_ops.cli import run; run()"
    argv = [sys.executable, "-c", code, "pipeline", "validate", "--json"]
    out = subprocess.run(argv, cwd=root, env=full, capture_output=True, text=True, timeout=300)
    return {f["source"] for f in json.loads(out.stdout) if f["rule"] == rule}


def test_config_and_env_changes_invalidate(make_project, tmp_path, monkeypatch) -> None:
    root = _rich(make_project)
    rule = "pydantic_columns_required"
    assert _cli_sources(root, tmp_path, rule) == {"alpha"}
    assert all(i.facts_cached for i in _introspect(root).values())
    config = root / ".dlt/config.toml"
    config.write_text(config.read_text().replace("include_raw = true", "include_raw = false"))
    intro = _introspect(root)
    assert intro["alpha"].facts_cached is False and intro["beta"].facts_cached is True
    assert _cli_sources(root, tmp_path, rule) == set()
    monkeypatch.setenv("SOURCES__BETA__INCLUDE_RAW", "true")
    intro = _introspect(root)
    assert intro["beta"].facts_cached is False and intro["alpha"].facts_cached is True
    assert _cli_sources(root, tmp_path, rule) == {"beta"}
    monkeypatch.setenv("INCLUDE_RAW", "true")  # a bare parameter name is read by dlt too
    assert not any(i.facts_cached for i in _introspect(root).values())
    assert _cli_sources(root, tmp_path, rule) == {"alpha", "beta"}


def test_dlt_ops_tables_do_not_invalidate(make_project, run_validate) -> None:
    root = _rich(make_project)
    run_validate(root)
    config = root / ".dlt/config.toml"
    config.write_text(config.read_text().replace('schedule = "@daily"', 'schedule = "@weekly"'))
    assert all(i.facts_cached for i in _introspect(root).values())


@pytest.mark.parametrize(
    "corrupt",
    ["{not json", "[]", '{"version": "0.0.0", "entries": {}}', "MANGLE_ENTRY", "SHORT_NAMES"],
)
def test_corrupt_cache_is_ignored(make_project, run_validate, corrupt: str) -> None:
    root = _rich(make_project)
    cold = _findings(run_validate(root))
    path = root / FACTS
    if corrupt in ("MANGLE_ENTRY", "SHORT_NAMES"):  # the key still matches, the facts are bad
        data = json.loads(path.read_text())
        for entry in data["entries"].values():
            if corrupt == "MANGLE_ENTRY":
                entry["facts"]["resources"] = [{"name": 1}]
            else:
                entry["facts"]["resource_names"] = []
        corrupt = json.dumps(data)
    path.write_text(corrupt)
    assert not any(i.facts_cached for i in _introspect(root).values())
    assert _findings(run_validate(root)) == cold
    assert all(i.facts_cached for i in _introspect(root).values())  # rewritten


def test_failures_are_not_cached(make_project, run_validate, h) -> None:
    src = h.good_source("alpha").replace(
        "def alpha_source():", "def alpha_source(token: str = dlt.secrets.value):"
    )
    root = make_project({"p/source/alpha.py": src}, h.section("alpha"))
    for _ in range(2):
        found = [f for f in run_validate(root).findings if f.field == "instantiate"]
        assert found and "token" in found[0].message
    assert _introspect(root)["alpha"].facts_cached is False


def _live_only_plugin() -> types.ModuleType:
    from dlt_ops import hookimpl
    from dlt_ops.validate import Finding, Rule

    def count(ctx):
        for intro in ctx.live():
            yield Finding(intro.info.name, "n", f"{len(intro.source.resources)} resource(s)")

    mod = types.ModuleType("live_only")

    @hookimpl
    def dlt_ops_register_validation_rules(register):
        register(Rule("acme_live", "Reads live objects.", count, needs_import=True),
                 name="acme_live")  # fmt: skip

    mod.dlt_ops_register_validation_rules = dlt_ops_register_validation_rules
    return mod


def test_rule_without_uses_facts_gets_live_objects(make_project, run_validate, h,
                                                   plugin_registry) -> None:  # fmt: skip
    from dlt_ops.builtin import secrets_toml
    from dlt_ops.builtin import validation_rules as builtin

    registry = plugin_registry(
        ("validation_rule", "core_rules", builtin),
        ("validation_rule", "acme", _live_only_plugin()),
        ("secret_backend", "secrets_toml", secrets_toml),
    )
    root = make_project({"p/source/alpha.py": h.good_source("alpha")}, h.section("alpha"))
    for _ in range(2):  # the second run has valid cached facts but must not use them
        found = h.by_rule(run_validate(root, registry), "acme_live")
        assert [f.message for f in found] == ["1 resource(s)"]


PROBE = (
    "import sys; from dlt_ops.cli import run; sys.argv = ['dlt-ops', 'pipeline', 'validate']\n"
    "try:\n    run()\nexcept SystemExit as exc:\n    code = exc.code\n"
    "tops = {m.split('.')[0] for m in sys.modules}\n"
    "heavy = ['dlt'] * ('dlt' in tops) + ['project'] * any(t.startswith('_dltops_project_') "
    "for t in tops)\n"
    "sys.stderr.write(f'\\nEXIT:{code} HEAVY:' + ','.join(heavy))\n"
)


def _validate_subprocess(root: Path, tmp_path: Path) -> tuple[str, str]:
    env = {**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false",
           "DLT_DATA_DIR": str(tmp_path / "dlt-data")}  # fmt: skip
    env.pop("DLT_PROJECT_DIR", None)
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=root, env=env, capture_output=True,
                         text=True, timeout=300)  # fmt: skip
    tail = out.stderr.rsplit("\nEXIT:", 1)[-1]
    exit_code, heavy = tail.split(" HEAVY:")
    return exit_code, heavy.strip()


def test_second_validate_imports_no_dlt(tmp_path: Path) -> None:
    from dlt_ops.project.scaffold import init_project

    init_project(tmp_path / "demo", example=True)
    root = tmp_path / "demo"
    code, heavy = _validate_subprocess(root, tmp_path)
    assert code in ("None", "0") and heavy == "dlt,project"  # cold: imported for real
    code, heavy = _validate_subprocess(root, tmp_path)
    assert code in ("None", "0") and heavy == ""  # warm: neither dlt nor project code
