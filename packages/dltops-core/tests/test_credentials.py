"""Credentials are found where dlt looks for them, and remembered for redaction."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlt_ops.config.credentials import resolve_credentials
from dlt_ops.redact import redact


def _files(root: Path, config: str = "", secrets: str = "") -> Path:
    (root / ".dlt").mkdir(parents=True, exist_ok=True)
    (root / ".dlt" / "config.toml").write_text("[dlt_ops]\n" + config)
    (root / ".dlt" / "secrets.toml").write_text(secrets)
    return root


def test_connection_string_from_secrets(tmp_path: Path) -> None:
    root = _files(
        tmp_path,
        secrets='[destination.postgres]\ncredentials = "postgresql://u:pw-in-secrets@h:5432/d"\n',
    )
    creds = resolve_credentials(root, "postgres", environ={})
    assert creds == "postgresql://u:pw-in-secrets@h:5432/d"
    assert "pw-in-secrets" not in redact(f"failed: {creds}")


def test_fields_merge_across_providers_env_wins(tmp_path: Path) -> None:
    root = _files(
        tmp_path,
        config='[destination.postgres.credentials]\nhost = "cfg-host"\ndatabase = "db"\n',
        secrets='[destination.postgres.credentials]\npassword = "from-secrets"\nhost = "s-host"\n',
    )
    env = {"DESTINATION__POSTGRES__CREDENTIALS__PASSWORD": "from-env-9"}
    creds = resolve_credentials(root, "postgres", environ=env)
    assert creds == {"password": "from-env-9", "host": "s-host", "database": "db"}
    assert redact("auth failed for from-env-9") == "auth failed for ***"


def test_pipeline_scoped_section_wins(tmp_path: Path) -> None:
    root = _files(
        tmp_path,
        config='[destination.duckdb]\ncredentials = "shared.duckdb"\n'
        '[demo_pipeline.destination.duckdb]\ncredentials = "demo.duckdb"\n',
    )
    assert resolve_credentials(root, "duckdb", "demo_pipeline", environ={}) == "demo.duckdb"
    assert resolve_credentials(root, "duckdb", "other_pipeline", environ={}) == "shared.duckdb"


def test_env_connection_string_beats_files(tmp_path: Path) -> None:
    root = _files(tmp_path, config='[destination.duckdb]\ncredentials = "file.duckdb"\n')
    env = {"DESTINATION__DUCKDB__CREDENTIALS": "env.duckdb"}
    assert resolve_credentials(root, "duckdb", environ=env) == "env.duckdb"


def test_generic_destination_section_is_the_fallback(tmp_path: Path) -> None:
    root = _files(tmp_path, config='[destination]\ncredentials = "generic.duckdb"\n')
    assert resolve_credentials(root, "duckdb", environ={}) == "generic.duckdb"


def test_nothing_configured_is_none(tmp_path: Path) -> None:
    assert resolve_credentials(_files(tmp_path), "duckdb", environ={}) is None


def test_destination_settings_are_found_like_credentials(tmp_path: Path) -> None:
    from dlt_ops.config.credentials import resolve_destination_setting
    from dlt_ops.config.loader import load_project_config
    from dlt_ops.destinations import connection_target, resolve_destination

    root = _files(
        tmp_path,
        config='default_destination = "bigquery"\ndefault_dataset = "d"\n'
        '[destination.bigquery]\nlocation = "EU"\n',
    )
    assert resolve_destination_setting(root, "bigquery", "location", environ={}) == "EU"
    env = {"DEMO_PIPELINE__DESTINATION__BIGQUERY__LOCATION": "US"}
    assert resolve_destination_setting(root, "bigquery", "location", "demo_pipeline", env) == "US"
    assert resolve_destination_setting(root, "bigquery", "nope", environ={}) is None
    config = load_project_config(root)
    target = connection_target(
        config, resolve_destination(config, "demo"), setting_keys=("location",)
    )
    assert target.options == {"location": "EU"}


def test_a_frozen_block_reads_the_environment_and_files_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fleet-wide command looks up a thousand sources' credentials: inside
    ``lookups_frozen`` the environment is scanned and both TOML files are read once; a change
    made inside the block shows after it."""
    from dlt_ops.config import credentials

    root = _files(tmp_path, config='[destination.duckdb]\ncredentials = "first.duckdb"\n')
    monkeypatch.setenv("DESTINATION__POSTGRES__CREDENTIALS", "postgresql://u@h/one")
    reads: list[Path] = []
    real_read = credentials.read_toml_cached
    monkeypatch.setattr(credentials, "read_toml_cached", lambda p: reads.append(p) or real_read(p))
    with credentials.lookups_frozen():
        for _ in range(3):
            assert resolve_credentials(root, "duckdb") == "first.duckdb"
            assert resolve_credentials(root, "postgres") == "postgresql://u@h/one"
        (root / ".dlt" / "config.toml").write_text(
            '[destination.duckdb]\ncredentials = "b.duckdb"\n'
        )
        monkeypatch.setenv("DESTINATION__POSTGRES__CREDENTIALS", "postgresql://u@h/two")
        with credentials.lookups_frozen():  # nested: the outer block's reads hold
            assert resolve_credentials(root, "duckdb") == "first.duckdb"
            assert resolve_credentials(root, "postgres") == "postgresql://u@h/one"
    assert sorted(p.name for p in reads) == ["config.toml", "secrets.toml"]
    assert resolve_credentials(root, "duckdb") == "b.duckdb"
    assert resolve_credentials(root, "postgres") == "postgresql://u@h/two"


def test_an_explicit_environment_is_never_frozen(tmp_path: Path) -> None:
    from dlt_ops.config.credentials import lookups_frozen

    root = _files(tmp_path)
    with lookups_frozen():
        assert resolve_credentials(root, "duckdb", environ={}) is None
        env = {"DESTINATION__DUCKDB__CREDENTIALS": "given.duckdb"}
        assert resolve_credentials(root, "duckdb", environ=env) == "given.duckdb"
