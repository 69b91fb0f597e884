"""A plugin declares the config keys it reads (kind ``config_key``): validate and runs accept
them and check their values; a misspelled key is still refused with a suggestion."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from tests.plugin_site import install_plugin

OWNER_PLUGIN = """
import dlt_ops
from dlt_ops.plugin_api import ConfigKey


@dlt_ops.hookimpl
def dlt_ops_register_config_keys(register):
    register(ConfigKey("owner", scope="source", expected="a team name (a string)",
                       check=lambda v: isinstance(v, str) and bool(v)), name="owner")
"""
CONFIG = """
[dlt_ops]
default_destination = "duckdb"
default_dataset = "ds"

[sources.events_src.dlt_ops]
schedule = "@daily"
{line}
"""


def _install(site: Path) -> dict[str, str]:
    entries = {"owner": "acme_owner_keys"}
    return install_plugin(
        site, "acme-owners", "dlt_ops.config_key", entries, "acme_owner_keys", OWNER_PLUGIN
    )


def _loaded(root: Path) -> int:
    with duckdb.connect(str(root / "events_src_pipeline.duckdb"), read_only=True) as con:
        return int(con.execute("SELECT count(*) FROM ds.events").fetchone()[0])


def _messages(proc) -> list[str]:  # noqa: ANN001
    return [f["message"] for f in json.loads(proc.stdout)]


def test_a_declared_key_passes_validate_and_run(tmp_path: Path, project, templates, cli) -> None:  # noqa: ANN001
    env = _install(tmp_path / "site")
    sources = {"events_src": templates["events"]}
    root = project(CONFIG.format(line='owner = "data-platform"'), sources)
    validated = cli("pipeline", "validate", "--json", cwd=root, env=env)
    assert not [m for m in _messages(validated) if "owner" in m], validated.stdout
    ran = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root, env=env)
    assert ran.returncode == 0, ran.stderr
    assert _loaded(root) > 0
    # the same project without the plugin: the key is unknown again, and the run refused
    bare = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    assert bare.returncode == 2 and "unknown key 'owner'" in bare.stderr, bare.stderr


def test_a_misspelled_or_mistyped_key_is_still_refused(
    tmp_path: Path,
    project,
    templates,
    cli,  # noqa: ANN001
) -> None:
    env = _install(tmp_path / "site")
    sources = {"events_src": templates["events"]}
    typo = project(CONFIG.format(line='ownr = "data-platform"'), sources, name="typo")
    validated = cli("pipeline", "validate", "--json", cwd=typo, env=env)
    assert any("unknown key 'ownr'" in m and "did you mean 'owner'" in m
               for m in _messages(validated)), validated.stdout  # fmt: skip
    ran = cli("pipeline", "run", "-s", "events_src", "-y", cwd=typo, env=env)
    assert ran.returncode == 2 and "did you mean 'owner'" in ran.stderr, ran.stderr
    assert not (typo / "events_src_pipeline.duckdb").exists()
    wrong = project(CONFIG.format(line="owner = 7"), {"events_src": templates["events"]},
                    name="wrong")  # fmt: skip
    ran = cli("pipeline", "run", "-s", "events_src", "-y", cwd=wrong, env=env)
    assert ran.returncode == 2, ran.stderr
    expected = "[sources.events_src.dlt_ops] owner must be a team name (a string), got int 7"
    assert expected in ran.stderr
    validated = cli("pipeline", "validate", "--json", cwd=wrong, env=env)
    assert any("must be a team name" in m for m in _messages(validated)), validated.stdout
