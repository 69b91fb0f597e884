"""Planted source secrets appear nowhere: not in output, logs, ledger rows, receipts or files.

A source receives three secrets the ways dlt hands them out — ``dlt.secrets.value`` from
``.dlt/secrets.toml``, ``dlt.secrets.value`` from an env var, and a resource argument resolved
only when extraction reaches it — and fails with an error message that quotes all of them.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

TOML_SECRET = "sk-toml-7f3a9c1e"
ENV_SECRET = "env-tok-55be02d4"
LATE_SECRET = "late-pw-c0ffee91"
SECRETS = (TOML_SECRET, ENV_SECRET, LATE_SECRET)

CONFIG = """
[dlt_ops]
default_destination = "{dest}"
default_dataset = "ds"
ledger_sinks = ["destination", "jsonl"]

[sources.leaky.dlt_ops]
schedule = "@daily"
"""

SOURCE = """
import dlt


@dlt.source(name="leaky")
def leaky_source(api_key: str = dlt.secrets.value, other_token: str = dlt.secrets.value):
    @dlt.resource(name="rows")
    def rows(late_password: str = dlt.secrets.value):
        yield [{"a": 1}, {"a": 2}]
        raise PermissionError(f"refused key={api_key} token={other_token} late={late_password}")

    return rows
"""


def _project(root: Path, dest: str) -> Path:
    (root / ".dlt").mkdir(parents=True)
    (root / ".dlt" / "config.toml").write_text(CONFIG.format(dest=dest))
    (root / ".dlt" / "secrets.toml").write_text(
        f'[sources.leaky]\napi_key = "{TOML_SECRET}"\n\n'
        f'[sources.leaky.rows]\nlate_password = "{LATE_SECRET}"\n'
    )
    module = root / "pl" / "source" / "leaky.py"
    module.parent.mkdir(parents=True)
    module.write_text(SOURCE)
    return root


def _leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def _file_leaks(root: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in root.rglob("*"):
        if not path.is_file() or path == root / ".dlt" / "secrets.toml":
            continue
        data = path.read_bytes()
        hits = [s for s in SECRETS if s.encode() in data]
        if hits:
            found[str(path.relative_to(root))] = hits
    return found


def _duckdb_dump(root: Path) -> str:
    with duckdb.connect(str(root / "leaky_pipeline.duckdb"), read_only=True) as con:
        tables = con.execute(
            "SELECT table_schema, table_name FROM information_schema.tables"
        ).fetchall()
        return "\n".join(
            str(con.execute(f'SELECT * FROM "{s}"."{t}"').fetchall()) for s, t in tables
        )


def _postgres_dump(url: str) -> str:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        tables = conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_schema NOT IN ('pg_catalog', 'information_schema')"
        ).fetchall()
        return "\n".join(
            str(conn.execute(f'SELECT * FROM "{s}"."{t}"').fetchall()) for s, t in tables
        )


@pytest.mark.parametrize("dest", ["duckdb", "postgres"])
def test_planted_source_secrets_appear_nowhere(tmp_path: Path, cli, dest: str, request) -> None:  # noqa: ANN001
    root = _project(tmp_path / "proj", dest)
    env = {"SOURCES__LEAKY__OTHER_TOKEN": ENV_SECRET}
    db = None
    if dest == "postgres":
        db = request.getfixturevalue("postgres_database")
        env["DESTINATION__POSTGRES__CREDENTIALS"] = db.dlt_url

    outputs = []
    for args in (
        ("pipeline", "run", "-s", "leaky", "-y"),
        ("pipeline", "run", "-s", "leaky", "-y", "--log-format", "console", "--debug"),
        ("runs", "show", "last"),
        ("runs", "show", "last", "--json"),
        ("runs", "list"),
        ("runs", "list", "--json"),
        ("pipeline", "status", "--json"),
    ):
        proc = cli(*args, cwd=root, env=env)
        outputs.append((args, proc))
    first = outputs[0][1]
    assert first.returncode == 1, first.stderr
    # the failure is still explained, just without the values
    assert "refused key=*** token=*** late=***" in first.stderr
    for args, proc in outputs:
        assert not _leaks(proc.stdout), (args, "stdout", _leaks(proc.stdout))
        assert not _leaks(proc.stderr), (args, "stderr", _leaks(proc.stderr))
    assert _file_leaks(root) == {}
    tables = _duckdb_dump(root) if db is None else _postgres_dump(db.url)
    assert "_dlt_ops_runs" in tables or "failed" in tables
    assert not _leaks(tables)


EARLY_SOURCE = """
import dlt


@dlt.source(name="leaky")
def leaky_source(api_key: str = dlt.secrets.value):
    raise ValueError(f"the api rejected {api_key}")
"""


def test_validate_masks_a_secret_quoted_while_instantiating(tmp_path: Path, cli) -> None:  # noqa: ANN001
    root = _project(tmp_path / "proj", "duckdb")
    (root / "pl" / "source" / "leaky.py").write_text(EARLY_SOURCE)
    for _ in range(2):  # the second validate reads the facts cache
        proc = cli("pipeline", "validate", cwd=root)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "the api rejected ***" in proc.stdout + proc.stderr
        assert not _leaks(proc.stdout + proc.stderr)
    assert _file_leaks(root) == {}
