"""``schedule emit`` with a plugin's schedule target: ``--help`` names the installed emitters
from entry-point metadata (without importing them), and the plugin's target writes the file."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import EVENTS_ON_DUCKDB, imported_modules
from tests.plugin_site import install_plugin

NOMAD = """
from dataclasses import dataclass

import dlt_ops


@dataclass(frozen=True)
class NomadTarget:
    name: str = "nomad"
    description: str = "run started by a Nomad periodic job"
    default_path: str = "dlt-ops.nomad.hcl"

    def render(self, sources, *, root, trigger_source, cli="dlt-ops", packages=()):
        return "".join(
            f'job "{s.name}" {{ cron = "{s.cron}" command = "{cli} --root {root} pipeline run '
            f'-s {s.name} -y --trigger-source {trigger_source}" }}\\n'
            for s in sources
        )


@dlt_ops.hookimpl
def dlt_ops_register_trigger_emitters(register):
    register(NomadTarget(), name="nomad")
"""


def _install(site: Path) -> dict[str, str]:
    return install_plugin(site, "acme-nomad", "dlt_ops.trigger_emitter",
                          {"nomad": "acme_nomad"}, "acme_nomad", NOMAD)  # fmt: skip


def test_help_names_an_installed_target_without_importing_it(tmp_path: Path, cli) -> None:  # noqa: ANN001
    env = _install(tmp_path / "site")
    proc = cli("schedule", "emit", "--help", cwd=tmp_path,
               env={**env, "PYTHONPROFILEIMPORTTIME": "1", "COLUMNS": "200"})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "A schedule target: cron, github-actions, nomad" in proc.stdout
    assert "y-scheduler" not in proc.stdout  # a run origin, not a schedule target
    assert "acme_nomad" not in imported_modules(proc.stderr)


def test_the_plugin_target_writes_the_schedule(tmp_path: Path, project, templates, cli) -> None:  # noqa: ANN001
    env = _install(tmp_path / "site")
    root = project(EVENTS_ON_DUCKDB, {"events_src": templates["events"]})
    proc = cli("schedule", "emit", "-t", "nomad", "-o", "-", cwd=root, env=env)
    assert proc.returncode == 0, proc.stderr
    assert 'job "events_src"' in proc.stdout and "--trigger-source nomad" in proc.stdout
    origin = cli("schedule", "emit", "-t", "y-scheduler", cwd=root, env=env)
    assert origin.returncode == 2 and "writes no schedule files" in origin.stderr
