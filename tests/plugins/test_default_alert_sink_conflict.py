"""Another package registering the alert sink ``log`` conflicts only where ``log`` is chosen:
with ``[dlt_ops] alert_sinks`` unset (dltops-core's own default), runs go on with dltops-core's
``log``; a project that lists ``log`` itself still has to pick."""

from __future__ import annotations

from pathlib import Path

from tests.plugin_site import install_plugin

OTHER_LOG = """
import dlt_ops


class OtherLog:
    target = "other log"

    def __init__(self, context):
        pass

    def send(self, alert):
        pass


@dlt_ops.hookimpl
def dlt_ops_register_alert_sinks(register):
    register(OtherLog, name="log")
"""
CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"
{line}

[sources.events_src.dlt_ops]
schedule = "@daily"
"""


def _install(site: Path) -> dict[str, str]:
    return install_plugin(site, "acme-log", "dlt_ops.alert_sink",
                          {"log": "acme_other_log"}, "acme_other_log", OTHER_LOG)  # fmt: skip


def test_an_unset_alert_sinks_runs_on_dltops_cores_log(
    tmp_path: Path, project, templates, cli
) -> None:  # noqa: ANN001, E501
    env = _install(tmp_path / "site")
    root = project(CONFIG.format(line=""), {"events_src": templates["events"]})
    ran = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root, env=env)
    assert ran.returncode == 0, ran.stderr


def test_a_project_that_lists_log_must_pick(tmp_path: Path, project, templates, cli) -> None:  # noqa: ANN001
    env = _install(tmp_path / "site")
    root = project(CONFIG.format(line='alert_sinks = ["log"]'), {"events_src": templates["events"]})
    ran = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root, env=env)
    assert ran.returncode == 2
    assert "alert_sink name 'log' is claimed by more than one plugin" in ran.stderr
    assert not (root / "events_src_pipeline.duckdb").exists()
