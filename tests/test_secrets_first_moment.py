"""A secret quoted by a lifecycle plugin is masked in every hook, from the first one on.

The plugin below is installed like any distribution (a ``*.dist-info`` on ``PYTHONPATH``) in
``dlt_ops.lifecycle``; a second one registers an alert sink that writes each alert body, as the
core hands it over, to a file. The plugin quotes three planted secrets that the source itself
never resolves (so dlt's resolution log never sees them): one in ``.dlt/secrets.toml``, one in a
dlt env var, one under a secret-named key in ``config.toml``. It logs them (structlog and stdlib
``logging``) in each hook and raises with them: in ``dlt_ops_prepare_run`` (refuses the run),
or in ``dlt_ops_run_started``, in its extract gate after extract (fails the run) and in
``dlt_ops_run_finished``.
"""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import duckdb
import pytest

TOML_SECRET = "tok-toml-3b7e91d2"
ENV_SECRET = "tok-env-a41c08f5"
CONFIG_SECRET = "tok-cfg-9d2f6e10"
SECRETS = (TOML_SECRET, ENV_SECRET, CONFIG_SECRET)
#: Quoted too, and must survive: a non-secret from secrets.toml and a too-short secret.
HOST = "warehouse-17.internal"
SHORT = "x9z"

PLUGIN = f"""
import logging

import structlog

from dlt_ops import hookimpl
from dlt_ops.errors import DltOpsError

QUOTE = "upstream {HOST} rejected {TOML_SECRET} / {ENV_SECRET} / {CONFIG_SECRET} pin {SHORT}"
MODE = __import__("os").environ["LEAKY_MODE"]


def _log(hook):
    structlog.get_logger("leaky").warning("leaky.saw", hook=hook, quote=QUOTE)
    logging.getLogger("leaky").warning("%s saw %s", hook, QUOTE)


class _Gate:
    name = "leaky"

    def attach(self, source):
        return source

    def after_extract(self, pipeline, load_id):  # fails the run after extract: receipts too
        raise RuntimeError("gate: " + QUOTE)

    def summary(self):
        from dlt_ops.runner.gates import GateSummary

        return GateSummary(gate="leaky")


class _Factory:
    def check(self, source):
        _log("check")

    def gate(self, run, source):
        _log("gate")
        return _Gate()


@hookimpl
def dlt_ops_prepare_run(prepared):
    _log("prepare_run")
    if MODE == "prepare":
        raise DltOpsError("change freeze: " + QUOTE)


@hookimpl
def dlt_ops_extract_gates(prepared):
    return _Factory()


@hookimpl
def dlt_ops_run_started(run, record):
    _log("run_started")
    raise RuntimeError("started: " + QUOTE)


@hookimpl
def dlt_ops_run_finished(run, outcome):
    _log("run_finished")
    raise RuntimeError("finished: " + QUOTE)
"""

ALERT_SINK = """
import json

from dlt_ops import hookimpl


class FileAlerts:
    target = "alerts.jsonl"

    def __init__(self, context):
        self.path = context.project_root / "alerts.jsonl"

    def send(self, alert):
        with self.path.open("a") as f:
            f.write(json.dumps(alert.as_json()) + "\\n")


@hookimpl
def dlt_ops_register_alert_sinks(register):
    register(FileAlerts, name="file_alerts")
"""

CONFIG = f"""
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"
alert_sinks = ["log", "file_alerts"]
ledger_sinks = ["destination", "jsonl"]

[sources.events_src]
client_secret = "{CONFIG_SECRET}"

[sources.events_src.dlt_ops]
schedule = "@daily"
"""

#: (global options, command options): plain, --json, --debug, JSON log lines
FORMATS = (
    (("--log-format", "console"), ()),
    (("--log-format", "console"), ("--json",)),
    (("--debug", "--log-format", "console"), ()),
    (("--log-format", "json"), ()),
)


def _install(site: Path) -> None:
    for module, group, name, text in (
        ("leaky_plugin", "dlt_ops.lifecycle", "leaky", PLUGIN),
        ("file_alerts_plugin", "dlt_ops.alert_sink", "file_alerts", ALERT_SINK),
    ):
        info = site / f"{module}-0.0.1.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.0.1\n")
        (info / "entry_points.txt").write_text(f"[{group}]\n{name} = {module}\n")
        (site / f"{module}.py").write_text(textwrap.dedent(text))


def _leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def _tables(db: Path) -> dict[str, str]:
    if not db.exists():
        return {}
    with duckdb.connect(str(db), read_only=True) as con:
        names = con.execute(
            "SELECT table_schema, table_name FROM information_schema.tables"
        ).fetchall()
        return {t: str(con.execute(f'SELECT * FROM "{s}"."{t}"').fetchall()) for s, t in names}


def _leaky_project(project, templates, tmp_path: Path, mode: str) -> tuple[Path, dict]:  # noqa: ANN001
    """The events project with the planted secrets, and the env that installs the plugins."""
    site = tmp_path / "site"
    _install(site)
    root = project(CONFIG, {"events_src": templates["events"]})
    (root / ".dlt" / "secrets.toml").write_text(
        f'[sources.events_src]\napi_key = "{TOML_SECRET}"\nhost = "{HOST}"\n'
        f'short_token = "{SHORT}"\n'
    )
    env = {
        "PYTHONPATH": os.pathsep.join(filter(None, (str(site), os.environ.get("PYTHONPATH")))),
        "LEAKY_MODE": mode,
        "SOURCES__EVENTS_SRC__ACCESS_TOKEN": ENV_SECRET,
    }
    return root, env


@pytest.mark.parametrize("mode", ["prepare", "run"])
def test_a_plugin_quoting_secrets_in_every_hook_leaks_none(
    project, templates, cli, tmp_path: Path, mode: str
) -> None:  # noqa: ANN001
    root, env = _leaky_project(project, templates, tmp_path, mode)

    for opts, flags in FORMATS:
        fmt = (*opts, *flags)
        proc = cli(*opts, "pipeline", "run", "-s", "events_src", "-y", *flags, cwd=root, env=env)
        out = proc.stdout + proc.stderr
        assert proc.returncode != 0 if mode == "prepare" else proc.returncode == 1, (fmt, out)
        # the plugin ran and its words got through, only the secrets did not
        assert "rejected ***" in out and HOST in out and f"pin {SHORT}" in out, (fmt, out)
        assert not _leaks(proc.stdout), (fmt, "stdout", proc.stdout)
        assert not _leaks(proc.stderr), (fmt, "stderr", proc.stderr)
        if "--json" in fmt and mode == "prepare":
            doc = json.loads(proc.stdout)
            assert "change freeze: upstream" in doc["error"], doc

    tables = _tables(root / "events_src_pipeline.duckdb")
    alerts = root / "alerts.jsonl"
    if mode == "run":  # the failed runs are on record: every copy masked
        assert "_dlt_ops_runs" in tables and "gate: upstream" in tables["_dlt_ops_runs"]
        assert "gate: upstream" in tables["_dlt_ops_receipts"]  # failure_reason
        bodies = alerts.read_text()
        assert bodies.count("\n") == len(FORMATS) and "gate: upstream" in bodies
        assert not _leaks(bodies)
    else:  # refused before anything was written
        assert "_dlt_ops_runs" not in tables and not alerts.exists()
    for name, rows in tables.items():
        assert not _leaks(rows), (name, _leaks(rows))
    for path in (root / ".dlt-ops").rglob("*"):
        if path.is_file():
            assert not _leaks(path.read_bytes().decode("utf-8", "replace")), path


def test_a_backfill_refused_by_the_plugin_leaks_none(
    project, templates, cli, tmp_path: Path
) -> None:  # noqa: ANN001
    root, env = _leaky_project(project, templates, tmp_path, "prepare")
    window = ("--from", "2026-01-01T00:00:00+00:00", "--to", "2026-01-03T00:00:00+00:00")
    proc = cli("pipeline", "backfill", "events_src", *window, "--chunk", "1d", "--json",
               cwd=root, env=env)  # fmt: skip
    assert proc.returncode != 0, proc.stderr
    assert "change freeze: upstream" in json.loads(proc.stdout)["error"], proc.stdout
    assert "rejected ***" in proc.stderr
    assert not _leaks(proc.stdout + proc.stderr), proc.stdout + proc.stderr
