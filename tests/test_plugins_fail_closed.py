"""A lifecycle plugin that cannot load refuses every run; an explicit switch turns it off.

Every run loads every ``dlt_ops.lifecycle`` plugin, so one that fails to import (a broken
release) or implements a hook nobody calls (a typo) would otherwise let a guard it carries (a
change freeze) fail open. The plugins here are installed like any distribution: a
``*.dist-info`` with ``entry_points.txt`` on ``PYTHONPATH``.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from tests.plugin_site import install_plugin

CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"
{extra}
[sources.events_src.dlt_ops]
schedule = "@daily"
"""

#: A change-freeze guard whose release is broken: its SDK is not installed.
BROKEN_IMPORT = """
import freeze_policy_sdk  # noqa: F401 - absent: ModuleNotFoundError at import

from dlt_ops import hookimpl


@hookimpl
def dlt_ops_prepare_run(prepared):
    raise RuntimeError("change freeze: no runs today")
"""

#: The guard's hook misspelled but decorated: pluggy's check_pending refuses the plugin.
TYPO_DECORATED = """
from dlt_ops import hookimpl


@hookimpl
def dlt_ops_prepare_runs(prepared):
    raise RuntimeError("change freeze: no runs today")
"""

#: The guard's hook misspelled and undecorated: pluggy would ignore it silently.
TYPO_UNDECORATED = """
def dlt_ops_prepare_rn(prepared):
    raise RuntimeError("change freeze: no runs today")
"""

BACKFILL = ("--from", "2020-01-01T00:00:00Z", "--to", "2020-01-03T00:00:00Z", "--chunk", "1d")


def _install(site: Path, body: str) -> dict[str, str]:
    """Install distribution ``freeze-guard`` 0.0.1 with lifecycle entry point ``freeze``."""
    entries = {"freeze": "freeze_guard_plugin"}
    return install_plugin(
        site, "freeze-guard", "dlt_ops.lifecycle", entries, "freeze_guard_plugin", body
    )


def _nothing_written(root: Path) -> None:
    assert not (root / "events_src_pipeline.duckdb").exists(), "a refused run created the file"
    pipelines = root / ".dlt-ops" / "pipelines"
    assert not pipelines.exists() or not any(pipelines.iterdir()), "dlt state was written"


def _ledger_rows(root: Path) -> int:
    with duckdb.connect(str(root / "events_src_pipeline.duckdb"), read_only=True) as db:
        return db.execute("SELECT count(*) FROM ds._dlt_ops_runs").fetchone()[0]


def _refused(proc, *needles: str) -> None:  # noqa: ANN001
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


def test_a_lifecycle_plugin_that_fails_to_import_refuses_run_backfill_and_validate(
    project, templates, cli, tmp_path: Path
) -> None:  # noqa: ANN001
    env = _install(tmp_path / "site", BROKEN_IMPORT)
    root = project(CONFIG.format(extra=""), {"events_src": templates["events"]})

    run = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root, env=env)
    _refused(run, "'freeze'", "freeze-guard 0.0.1", "ModuleNotFoundError", "freeze_policy_sdk")
    _nothing_written(root)

    backfill = cli("pipeline", "backfill", "events_src", *BACKFILL, cwd=root, env=env)
    _refused(backfill, "'freeze'", "freeze-guard 0.0.1", "ModuleNotFoundError")
    _nothing_written(root)

    validate = cli("pipeline", "validate", "--json", cwd=root, env=env)
    assert validate.returncode == 1, validate.stdout + validate.stderr
    findings = [f for f in json.loads(validate.stdout) if "freeze" in f["message"]]
    assert len(findings) == 1, validate.stdout
    assert findings[0]["is_warning"] is False and findings[0]["rule"] == "run_plugins_load"
    assert "freeze-guard 0.0.1" in findings[0]["message"]


@pytest.mark.parametrize("body", [TYPO_DECORATED, TYPO_UNDECORATED], ids=["decorated", "bare"])
def test_a_lifecycle_plugin_with_a_misspelled_hook_refuses_the_run(
    project, templates, cli, tmp_path: Path, body: str
) -> None:  # noqa: ANN001
    env = _install(tmp_path / "site", body)
    root = project(CONFIG.format(extra=""), {"events_src": templates["events"]})
    run = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root, env=env)
    _refused(run, "'freeze'", "freeze-guard 0.0.1", "dlt_ops_prepare_r")
    _nothing_written(root)


def test_disabled_in_config_the_plugin_is_never_imported_and_listed_disabled(
    project, templates, cli, tmp_path: Path
) -> None:  # noqa: ANN001
    env = _install(tmp_path / "site", BROKEN_IMPORT)
    extra = '[dlt_ops.plugins]\ndisable = ["freeze"]\n'
    root = project(CONFIG.format(extra=extra), {"events_src": templates["events"]})

    run = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root, env=env)
    assert run.returncode == 0, run.stderr
    assert _ledger_rows(root) == 1
    backfill = cli("pipeline", "backfill", "events_src", *BACKFILL, cwd=root, env=env)
    assert backfill.returncode == 0, backfill.stderr

    listed = cli("plugins", "list", "--json", cwd=root, env=env)
    rows = {(r["kind"], r["name"]): r for r in json.loads(listed.stdout)}
    assert rows["lifecycle", "freeze"]["status"] == "disabled"
    assert rows["lifecycle", "freeze"]["distribution"] == "freeze-guard"
    plain = cli("plugins", "list", cwd=root, env=env).stdout
    (line,) = [ln for ln in plain.splitlines() if ln.split()[:2] == ["lifecycle", "freeze"]]
    assert line.split()[-1] == "disabled"
    doctor = cli("plugins", "doctor", cwd=root, env=env)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "disabled by [dlt_ops.plugins] disable" in doctor.stdout

    validate = cli("pipeline", "validate", "--json", cwd=root, env=env)
    assert "freeze" not in validate.stdout, validate.stdout


def test_disabled_for_one_process_by_the_environment(
    project, templates, cli, tmp_path: Path
) -> None:  # noqa: ANN001
    env = _install(tmp_path / "site", BROKEN_IMPORT)
    root = project(CONFIG.format(extra=""), {"events_src": templates["events"]})
    off = {**env, "DLT_OPS_DISABLE_PLUGINS": "something_else, lifecycle:freeze"}

    run = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root, env=off)
    assert run.returncode == 0, run.stderr
    listed = cli("plugins", "list", "--json", cwd=root, env=off)
    rows = {(r["kind"], r["name"]): r for r in json.loads(listed.stdout)}
    assert rows["lifecycle", "freeze"]["status"] == "disabled"
    doctor = cli("plugins", "doctor", cwd=root, env=off)
    assert doctor.returncode == 0 and "disabled by DLT_OPS_DISABLE_PLUGINS" in doctor.stdout

    # without the switch the next run is refused, and the ledger gains no row
    before = _ledger_rows(root)
    again = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root, env=env)
    _refused(again, "'freeze'", "DLT_OPS_DISABLE_PLUGINS")
    assert _ledger_rows(root) == before


def test_a_disabled_destination_adapter_is_a_clear_refusal(project, templates, cli) -> None:  # noqa: ANN001
    root = project(CONFIG.format(extra=""), {"events_src": templates["events"]})
    run = cli(
        "pipeline", "run", "-s", "events_src", "-y", cwd=root,
        env={"DLT_OPS_DISABLE_PLUGINS": "duckdb"},
    )  # fmt: skip
    _refused(run, "destination plugin 'duckdb'", "is disabled", "DLT_OPS_DISABLE_PLUGINS")
    _nothing_written(root)


def test_disable_must_be_a_list_of_names(project, templates, cli) -> None:  # noqa: ANN001
    extra = '[dlt_ops.plugins]\ndisable = "freeze"\n'
    root = project(CONFIG.format(extra=extra), {"events_src": templates["events"]})
    run = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    _refused(run, "[dlt_ops.plugins] disable", "a list of")
    _nothing_written(root)


#: A working guard: its refusal is a refusal (exit 2, nothing written), naming the plugin.
GUARD = """
from dlt_ops import hookimpl


@hookimpl
def dlt_ops_prepare_run(prepared):
    raise RuntimeError("change freeze: no runs today")
"""


def test_a_guard_that_refuses_exits_2_naming_itself(
    project, templates, cli, tmp_path: Path
) -> None:  # noqa: ANN001, E501
    env = _install(tmp_path / "site", GUARD)
    root = project(CONFIG.format(extra=""), {"events_src": templates["events"]})
    for args in (("pipeline", "run", "-s", "events_src", "-y"),
                 ("pipeline", "backfill", "events_src", *BACKFILL)):  # fmt: skip
        proc = cli(*args, cwd=root, env=env)
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert "change freeze: no runs today" in proc.stderr
        assert "freeze-guard 0.0.1" in proc.stderr and "refused the run" in proc.stderr
    assert not list(root.glob("*.duckdb"))  # nothing written
