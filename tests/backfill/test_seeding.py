"""Backfill chunk seeding: each chunk after the first starts from the working state the
previous chunk left (its dlt state and schemas), not from a restore out of the destination.

The source below keeps a list in its dlt resource state and appends its chunk's first day to
it; each chunk writes down what it found there when it started. A seeded chunk skips the
restore from the destination (``sync_destination``), so it finds the earlier days only if
the seed really carried them; the run logs ``working_dir.seeded`` (naming the sibling it
started from) only when it seeded.
"""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import build_project

SEEN = """
import json
import os

import dlt
from datetime import datetime, timezone


@dlt.resource(primary_key="id", write_disposition="merge")
def days(ts=dlt.sources.incremental("ts", initial_value=datetime(2026, 1, 1, tzinfo=timezone.utc))):
    state = dlt.current.resource_state()
    found = list(state.get("chunks", []))
    day = ts.start_value.date().isoformat()
    with open(os.environ["SEEN_LOG"], "a") as log:
        log.write(json.dumps({"chunk": day, "found": found}) + "\\n")
    state["chunks"] = [*found, day]
    yield {"id": day, "ts": ts.start_value}


@dlt.source(name="seen")
def seen_source():
    return days
"""


def test_each_chunk_starts_from_the_previous_chunks_state(tmp_path: Path) -> None:
    project = build_project(tmp_path / "proj", "duckdb")
    (project.root / "pipe/source/seen.py").write_text(SEEN)
    config = project.root / ".dlt/config.toml"
    config.write_text(config.read_text() + '\n[sources.seen.dlt_ops]\nschedule = "@daily"\n')
    seen_log = tmp_path / "seen.jsonl"
    proc = project.cli(
        "--log-format", "json", "--debug",
        "pipeline", "backfill", "seen", "--from", "2026-01-01T00:00:00Z",
        "--to", "2026-01-04T00:00:00Z", "--chunk", "1d", "--dataset", "bf_data",
        env={"SEEN_LOG": str(seen_log)},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    days = ["2026-01-01", "2026-01-02", "2026-01-03"]
    found = [json.loads(line) for line in seen_log.read_text().splitlines()]
    # every chunk found the days of the chunks before it, in order
    assert found == [{"chunk": d, "found": days[:i]} for i, d in enumerate(days)], found
    events = []
    for line in proc.stderr.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    seeded = [e for e in events if e.get("event") == "working_dir.seeded"]
    # chunks 2 and 3 were seeded, each from the chunk run just before it
    assert len(seeded) == 2, [e.get("event") for e in events]
    dirs = [Path(e["working_dir"]).parent.name for e in seeded]
    siblings = [Path(e["sibling"]).parent.name for e in seeded]
    assert len(set(dirs)) == 2 and siblings[1] == dirs[0], seeded
    assert siblings[0] not in dirs, seeded  # the first seed came from chunk 1's dir
