"""`dlt-ops plugins doctor|list` against real installed metadata, in a subprocess.

A throwaway distribution is a ``*.dist-info`` folder with ``entry_points.txt`` on
``PYTHONPATH``: importlib.metadata sees it exactly like a pip-installed package.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

CLI = "import sys; sys.argv = ['dlt-ops', *sys.argv[1:]]; from dlt_ops.cli import main; main()"


def _install_dist(site: Path, dist: str, entry_points: str, modules: dict[str, str]) -> None:
    info = site / f"{dist.replace('-', '_')}-0.0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))
    for name, body in modules.items():
        (site / f"{name}.py").write_text(textwrap.dedent(body))


def _cli(site: Path | None, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if site is not None:
        env["PYTHONPATH"] = str(site)
    return subprocess.run(
        [sys.executable, "-c", CLI, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=False,
    )


def test_doctor_is_ok_on_a_clean_install(tmp_path: Path) -> None:
    proc = _cli(None, "plugins", "doctor", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "duckdb" in proc.stdout and proc.stdout.rstrip().endswith("plugins doctor: OK")


def test_doctor_fails_with_a_broken_plugin_installed(tmp_path: Path) -> None:
    _install_dist(
        tmp_path / "site",
        "broken-dltops-plugin",
        """
        [dlt_ops.destination]
        brokendb = broken_dltops_plugin
        """,
        {"broken_dltops_plugin": "raise ImportError('the brokendb SDK is not installed')\n"},
    )
    proc = _cli(tmp_path / "site", "plugins", "doctor", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "brokendb" in proc.stdout and "the brokendb SDK is not installed" in proc.stdout
    assert "1 failure(s)" in proc.stdout
    # the broken plugin never breaks an unrelated lookup
    listed = _cli(tmp_path / "site", "plugins", "list", "--json", cwd=tmp_path)
    assert listed.returncode == 0
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert rows["duckdb"]["status"] == "ok" and rows["brokendb"]["status"] == "failed"


def test_doctor_reports_a_conflict_and_a_pick_fixes_it(tmp_path: Path) -> None:
    _install_dist(
        tmp_path / "site",
        "other-duckdb",
        """
        [dlt_ops.destination]
        duckdb = other_duckdb_plugin
        """,
        {
            "other_duckdb_plugin": """
            from dlt_ops import hookimpl
            from dltops_duckdb.adapter import DuckDBAdapter

            @hookimpl
            def dlt_ops_register_destinations(register):
                register(DuckDBAdapter, name="duckdb")
            """
        },
    )
    proc = _cli(tmp_path / "site", "plugins", "doctor", cwd=tmp_path)
    assert proc.returncode == 1
    assert "CONFLICT" in proc.stdout and "[dlt_ops.plugins.destination]" in proc.stdout
    project = tmp_path / "proj"
    (project / ".dlt").mkdir(parents=True)
    (project / ".dlt" / "config.toml").write_text(
        '[dlt_ops]\n[dlt_ops.plugins.destination]\nduckdb = "dltops-duckdb"\n'
    )
    fixed = _cli(tmp_path / "site", "plugins", "doctor", cwd=project)
    assert fixed.returncode == 0, fixed.stdout


def test_doctor_flags_an_incomplete_adapter_and_a_misspelled_group(tmp_path: Path) -> None:
    _install_dist(
        tmp_path / "site",
        "half-adapter",
        """
        [dlt_ops.destination]
        halfdb = half_adapter_plugin

        [dlt_ops.destinations]
        typo = half_adapter_plugin
        """,
        {
            "half_adapter_plugin": """
            from dlt_ops import hookimpl

            class HalfAdapter:
                name = "halfdb"

            @hookimpl
            def dlt_ops_register_destinations(register):
                register(HalfAdapter, name="halfdb")
            """
        },
    )
    proc = _cli(tmp_path / "site", "plugins", "doctor", cwd=tmp_path)
    assert proc.returncode == 1
    assert "halfdb" in proc.stdout and "lacks: connect" in proc.stdout
    assert "unknown plugin kind 'dlt_ops.destinations'" in proc.stdout


def test_doctor_flags_hookless_plugins_unmarked_hooks_and_refused_names(tmp_path: Path) -> None:
    _install_dist(
        tmp_path / "site",
        "sloppy-plugins",
        """
        [dlt_ops.trigger_emitter]
        nohooks = sloppy_nohooks
        typo = sloppy_typo
        pack = sloppy_pack
        """,
        {
            "sloppy_nohooks": "VALUE = 1\n",
            "sloppy_typo": """
            def dlt_ops_register_trigger_emitter(register):  # misspelled and undecorated
                pass
            """,
            "sloppy_pack": """
            from dataclasses import dataclass
            from dlt_ops import hookimpl

            @dataclass(frozen=True)
            class Emitter:
                description: str

            @hookimpl
            def dlt_ops_register_trigger_emitters(register):
                register(Emitter("runs started by cron"), name="cron")
                register("a string, not an emitter", name="broken")
            """,
        },
    )
    proc = _cli(tmp_path / "site", "plugins", "doctor", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = {ln.split()[0]: ln for ln in proc.stdout.splitlines() if ln.startswith("  ")}
    assert "implements no hook" in lines["nohooks"]
    assert "dlt_ops_register_trigger_emitter: matches no hook (misspelled?)" in lines["typo"]
    assert "registers: cron" in lines["pack"]
    assert "'broken' not registered: str lacks: description" in lines["pack"]
    assert "3 failure(s)" in proc.stdout
    listed = _cli(tmp_path / "site", "plugins", "list", "--json", cwd=tmp_path)
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert rows["pack"]["registers"] == ["cron"] and rows["pack"]["status"] == "incomplete"
    table = _cli(tmp_path / "site", "plugins", "list", cwd=tmp_path).stdout
    assert "REGISTERS" in table.splitlines()[0]
    (pack_line,) = [ln for ln in table.splitlines() if ln.split()[1:2] == ["pack"]]
    assert pack_line.split()[2] == "cron"


def test_doctor_flags_a_misnamed_adapter_in_every_registration(tmp_path: Path) -> None:
    # two registrations of one plugin: the first is complete but says another name, the second
    # lacks members; a third is named after no dlt destination and lets dlt build it by name
    _install_dist(
        tmp_path / "site",
        "misnamed-adapters",
        """
        [dlt_ops.destination]
        quackdb = misnamed_adapters_plugin
        """,
        {
            "misnamed_adapters_plugin": """
            from dlt_ops import hookimpl
            from dlt_ops.adapters import DestinationAdapter
            from dltops_duckdb.adapter import DuckDBAdapter

            class Quack(DuckDBAdapter):
                name = "duckdb"

            class NoDlt(DuckDBAdapter):
                name = "nodltdb"
                dlt_destination = DestinationAdapter.dlt_destination  # dlt builds it by name

            class Half:
                name = "halfdb"

            @hookimpl
            def dlt_ops_register_destinations(register):
                register(Quack, name="quackdb")
                register(Half, name="halfdb")
                register(NoDlt, name="nodltdb")
            """
        },
    )
    proc = _cli(tmp_path / "site", "plugins", "doctor", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout
    assert "adapter registered as 'quackdb' says name = 'duckdb'" in proc.stdout
    assert "adapter 'halfdb' lacks: connect" in proc.stdout  # the second registration too
    assert "dlt has no destination named 'nodltdb'" in proc.stdout


def test_doctor_flags_a_stale_pick(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".dlt").mkdir(parents=True)
    config = project / ".dlt" / "config.toml"
    config.write_text('[dlt_ops]\n[dlt_ops.plugins.destination]\nduckdb = "dltops-duckdb-old"\n')
    proc = _cli(None, "plugins", "doctor", cwd=project)
    assert proc.returncode == 1, proc.stdout
    assert (
        'STALE PICK: [dlt_ops.plugins.destination] duckdb = "dltops-duckdb-old" names no '
        "installed plugin claiming 'duckdb' (claimants: dltops-duckdb, dltops_duckdb.plugin)"
    ) in proc.stdout
    assert "1 stale pick(s)" in proc.stdout
    config.write_text('[dlt_ops]\n[dlt_ops.plugins.destination]\nduckdb = "dltops-duckdb"\n')
    assert _cli(None, "plugins", "doctor", cwd=project).returncode == 0
