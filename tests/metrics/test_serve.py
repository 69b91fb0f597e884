"""`scheduler run --serve`: /metrics, /healthz and the fleet report over real HTTP while the
scheduler runs what is due."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import duckdb
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import EVENTS_ON_DUCKDB

DLT_OPS = str(Path(sys.executable).parent / "dlt-ops")


def _get(url: str) -> tuple[int, str, str]:
    with urllib.request.urlopen(url, timeout=30) as resp:  # noqa: S310 (loopback)
        return resp.status, resp.headers["Content-Type"], resp.read().decode()


def _runs_total(text: str) -> dict[tuple[str, str], float]:
    return {
        (s.labels["source"], s.labels["status"]): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "dlt_ops_runs_total"
    }


def _lines(stream, out: queue.Queue) -> None:  # noqa: ANN001
    for line in stream:
        out.put(line)


def test_serve_answers_while_the_scheduler_runs_what_is_due(project, templates) -> None:  # noqa: ANN001
    root = project(EVENTS_ON_DUCKDB, {"events_src": templates["events"]})
    proc = subprocess.Popen(
        [DLT_OPS, "--root", str(root), "scheduler", "run", "--serve", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "RUNTIME__DLTHUB_TELEMETRY": "false"},
    )  # fmt: skip
    err: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_lines, args=(proc.stderr, err), daemon=True).start()
    threading.Thread(target=_lines, args=(proc.stdout, queue.Queue()), daemon=True).start()
    try:
        deadline, url = time.monotonic() + 60, None
        while url is None:
            assert proc.poll() is None and time.monotonic() < deadline, "never served"
            try:
                match = re.search(r"serving (http://\S+)", err.get(timeout=1))
            except queue.Empty:
                continue
            url = match.group(1) if match else None
        deadline = time.monotonic() + 120
        while True:  # the scheduler runs the @daily source at once (never ran: due)
            status, kind, body = _get(f"{url}/metrics")
            if _runs_total(body).get(("events_src", "completed")) == 1:
                break
            assert time.monotonic() < deadline, body
            time.sleep(0.2)
        assert status == 200 and kind.startswith("text/plain; version=")
        served_runs = _runs_total(body)
        while True:  # the pass is counted when it ends: after its run's child has reported
            status, kind, body = _get(f"{url}/healthz")
            health = json.loads(body)
            if health["ticks"] >= 1:
                break
            assert time.monotonic() < deadline, body
            time.sleep(0.2)
        assert status == 200 and kind == "application/json" and health["status"] == "ok"
        assert health["ticks"] >= 1 and health["last_tick_at"]
        status, kind, body = _get(f"{url}/")
        assert status == 200 and kind.startswith("text/html") and "events_src" in body
        try:
            _get(f"{url}/nope")
            raise AssertionError("an unknown path answered 200")
        except urllib.error.HTTPError as exc:
            assert exc.code == 404
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
    assert proc.returncode == 0
    # Read the ledger only once the scheduler has exited: while it runs, its ticks open the
    # DuckDB file for writing and a second process cannot open it at all.
    with duckdb.connect(str(root / "events_src_pipeline.duckdb"), read_only=True) as conn:
        rows = conn.execute(
            "SELECT source_section, status, count(*) FROM ds._dlt_ops_runs GROUP BY 1, 2"
        ).fetchall()
    assert served_runs == {(s, st): float(n) for s, st, n in rows}


def test_serve_is_refused_with_once(project, templates, cli) -> None:  # noqa: ANN001
    root = project(EVENTS_ON_DUCKDB, {"events_src": templates["events"]})
    proc = cli("scheduler", "run", "--once", "--serve", "127.0.0.1:0", cwd=root)
    assert proc.returncode == 2 and "--serve needs the loop" in proc.stderr
    bad = cli("scheduler", "run", "--serve", "nowhere", cwd=root)
    assert bad.returncode == 2 and "expected HOST:PORT" in bad.stderr
