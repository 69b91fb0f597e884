"""``harvest_project_secrets``: what it takes from a project before any plugin or source runs.

Redaction's memory is process-wide, so every test plants values of its own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from dlt_ops.config.secret_values import harvest_project_secrets
from dlt_ops.redact import redact


def _root(tmp_path: Path, secrets: str = "", config: str = "[dlt_ops]\n") -> Path:
    (tmp_path / ".dlt").mkdir()
    (tmp_path / ".dlt" / "secrets.toml").write_text(secrets)
    (tmp_path / ".dlt" / "config.toml").write_text(config)
    return tmp_path


def test_secrets_toml_secret_names_only_and_never_short_values(tmp_path: Path) -> None:
    root = _root(
        tmp_path,
        '[sources.s]\napi_key = "ak-h1-5e6f7a"\nhost = "db-h1.internal"\nsession_id = "s1"\n',
    )
    harvest_project_secrets(root, {}, environ={})
    assert redact("ak-h1-5e6f7a at db-h1.internal, s1 ok") == "*** at db-h1.internal, s1 ok"


def test_config_toml_keys_ending_in_a_secret_word(tmp_path: Path) -> None:
    doc = {
        "sources": {
            "s": {"client_secret": "cs-h2-0a1b2c", "sort_key": "created-h2", "base_url": "u"},
            "dlt_ops": {"airflow_var_key": "api_secret_key"},  # dlt-ops' own: not a secret
        },
        "destination": {
            "pg": {"credentials": "postgresql://loader:pw-h2-3d4e@db-h2.example/wh"},
            "other": {"credentials": {"password": "pw-h2-5f6a", "host": "h2-host"}},
            "duckdb": {"credentials": "data/h2-file.duckdb"},  # a path, not a secret
        },
    }
    harvest_project_secrets(_root(tmp_path), doc, environ={})
    text = "cs-h2-0a1b2c created-h2 api_secret_key pw-h2-3d4e db-h2.example pw-h2-5f6a h2-file"
    assert redact(text) == "*** created-h2 api_secret_key *** db-h2.example *** h2-file"


def test_env_vars_in_dlts_layout(tmp_path: Path) -> None:
    service_account = {"private_key": "pk-h3-7b8c9d", "token_uri": "https://h3.example/token"}
    env = {
        "SOURCES__S__ACCESS_TOKEN": "at-h3-1a2b3c",
        "DESTINATION__PG__CREDENTIALS": "postgresql://u:pw-h3-4d5e@db-h3.example/wh",
        "DESTINATION__BQ__CREDENTIALS": json.dumps(service_account),
        "SOURCES__S__SORT_KEY": "sorted-h3",
        "MY_TOKEN": "not-dlt-h3",  # no section: not dlt config
        "SOURCES__S__PASSWORD": "pw",  # too short to mask
    }
    harvest_project_secrets(_root(tmp_path), {}, environ=env)
    text = "at-h3-1a2b3c pw-h3-4d5e db-h3.example pk-h3-7b8c9d https://h3.example/token"
    assert redact(text) == "*** *** db-h3.example *** https://h3.example/token"
    assert redact("sorted-h3 not-dlt-h3 pw") == "sorted-h3 not-dlt-h3 pw"


def test_loading_the_config_harvests_without_importing_dlt(tmp_path: Path) -> None:
    root = _root(
        tmp_path,
        '[sources.s]\napi_key = "ak-h4-8e9f0a"\n',
        '[dlt_ops]\ndefault_destination = "duckdb"\n[sources.s]\npassword = "pw-h4-1b2c3d"\n',
    )
    code = (
        "import sys; from pathlib import Path; from dlt_ops.config import load_project_config;"
        "from dlt_ops.redact import redact; load_project_config(Path(sys.argv[1]));"
        "print(redact('ak-h4-8e9f0a pw-h4-1b2c3d SOURCES_H4'), 'dlt' in sys.modules)"
    )
    env = {"SOURCES__S__TOKEN": "SOURCES_H4", "PATH": "/usr/bin"}
    proc = subprocess.run(
        [sys.executable, "-c", code, str(root)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.stdout.split() == ["***", "***", "***", "False"], proc.stderr
