"""The DuckDB quickstart run by README command 1.

Today it proves the install: every plugin loads (`dlt-ops plugins doctor`) and the DuckDB
adapter round-trips a row through a real database file in a scratch project.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from dlt_ops.adapters import Column, ColumnType, Statement, TableSpec
from dlt_ops.config import load_project_config
from dlt_ops.destinations import open_session, resolve_destination
from dlt_ops.plugins import PluginRegistry

CONFIG = """[dlt_ops]
default_destination = "duckdb"
default_dataset = "quickstart"

[sources.hello.dlt_ops]
schedule = "@daily"
"""


def main() -> int:
    doctor = subprocess.run(["dlt-ops", "plugins", "doctor"], check=False)
    if doctor.returncode != 0:
        return doctor.returncode
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".dlt").mkdir()
        (root / ".dlt" / "config.toml").write_text(CONFIG)
        config = load_project_config(root)
        where = resolve_destination(config, "hello")
        table = TableSpec("hello", (Column("said_at", ColumnType.TIMESTAMPTZ),))
        with open_session(PluginRegistry(picks=config.plugins), config, where) as session:
            session.ensure_table(table)
            session.execute(
                Statement("INSERT INTO {hello} (said_at) VALUES (?)"), datetime.now(UTC)
            )
            (count,) = session.query(Statement("SELECT COUNT(*) FROM {hello}"))[0]
        print(f"duckdb round trip: {count} row in {root / 'hello_pipeline.duckdb'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
