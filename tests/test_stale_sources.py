"""`stale_sources`: a source that ran and then stopped is a validate warning."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import duckdb

CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"
staleness_days = 3

[dlt_ops.rules]
pydantic_columns_required = false  # the shared test source has no columns= model

[sources.events_src.dlt_ops]
schedule = "@daily"
{exempt}
"""


def _findings(cli, root, *args: str) -> tuple[int, list[dict]]:  # noqa: ANN001
    proc = cli("pipeline", "validate", "--json", *args, cwd=root)
    return proc.returncode, [f for f in json.loads(proc.stdout) if f.get("rule") == "stale_sources"]


def test_stale_source_warns_and_exemption_silences_it(project, templates, cli) -> None:  # noqa: ANN001
    root = project(CONFIG.format(exempt=""), {"events_src": templates["events"]})
    assert _findings(cli, root) == (0, [])  # no history: silent
    assert cli("pipeline", "run", "-s", "events_src", "-y", cwd=root).returncode == 0
    assert _findings(cli, root) == (0, [])  # fresh run: silent

    old = datetime.now(UTC) - timedelta(days=5)
    with duckdb.connect(str(root / "events_src_pipeline.duckdb")) as con:
        con.execute("UPDATE ds._dlt_ops_runs SET started_at = ?", [old])
    code, findings = _findings(cli, root)
    assert code == 0
    (finding,) = findings
    assert finding["is_warning"] and finding["source"] == "events_src"
    assert "stale source: last run started" in finding["message"]
    assert "staleness_days = 3" in finding["message"]
    assert _findings(cli, root, "--strict")[0] == 1

    exempt = '\n[sources.events_src.dlt_ops.rule_exemptions]\nstale_sources = "paused on purpose"'
    (root / ".dlt" / "config.toml").write_text(CONFIG.format(exempt=exempt))
    assert _findings(cli, root, "--strict") == (0, [])


def test_unreadable_ledger_is_silent(project, templates, cli) -> None:  # noqa: ANN001
    config = CONFIG.format(exempt="").replace(
        'default_destination = "duckdb"', 'default_destination = "postgres"'
    )
    root = project(config, {"events_src": templates["events"]})
    env = {"DESTINATION__POSTGRES__CREDENTIALS": "postgresql://u:p@127.0.0.1:9/none"}
    proc = cli("pipeline", "validate", "--json", cwd=root, env=env)
    assert [f for f in json.loads(proc.stdout) if f.get("rule") == "stale_sources"] == []
