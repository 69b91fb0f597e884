"""OpenLineage events of `pipeline run`, received by a real HTTP server on loopback.

Each run is the real CLI in a subprocess against DuckDB; every event is checked against the
spec's types (conftest ``validate``), and the outputs against the run's own receipt.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

from dlt_ops.lineage.ids import run_uuid
from tests.conftest import EVENTS_ON_DUCKDB
from tests.lineage.conftest import lineage_config, validate

PLANTED = "pl4nted-s3cret-value-91"

LEAKY_SOURCE = """
import dlt


@dlt.source(name="{name}")
def {name}_source(api_key=dlt.secrets.value):
    raise ValueError(f"the API refused key {api_key} at https://user:" + api_key + "@api.local/")
"""


def _secrets(root: Path, source: str) -> None:
    (root / ".dlt" / "secrets.toml").write_text(f'[sources.{source}]\napi_key = "{PLANTED}"\n')


def _show(cli, root: Path) -> dict:  # noqa: ANN001
    proc = cli("runs", "show", "last", "--json", cwd=root)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_completed_run_sends_start_and_complete_with_its_tables(
    project, templates, cli, receiver
) -> None:  # noqa: ANN001
    config = EVENTS_ON_DUCKDB + lineage_config(receiver.url, namespace="analytics")
    root = project(config, {"events_src": templates["events"]})
    run = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    assert run.returncode == 0, run.stderr[-2000:]
    start, complete = (validate(e) for e in receiver.wait_for(2))
    assert [start.eventType.value, complete.eventType.value] == ["START", "COMPLETE"]
    doc = _show(cli, root)
    assert start.run.runId == complete.run.runId == run_uuid(doc["run"]["run_id"])
    assert (complete.job.namespace, complete.job.name) == ("analytics", "events_src")
    assert receiver.paths == ["/api/v1/lineage"] * 2
    (row,) = doc["receipt"]
    outputs = {o.name: o for o in complete.outputs}
    assert set(outputs) == {"ds.events"}
    events = outputs["ds.events"]
    assert events.namespace == f"duckdb://{root / 'events_src_pipeline.duckdb'}"
    assert events.outputFacets["outputStatistics"].rowCount == row["rows_loaded"] == 6
    columns = {f.name: f.type for f in events.facets["schema"].fields}
    assert {"id", "kind", "occurred_at", "_dlt_load_id"} <= set(columns)
    assert columns["occurred_at"] == "timestamp"
    assert "parent" not in complete.run.facets  # a plain run from the CLI has no parent


def test_a_failed_run_sends_fail_with_the_error_and_no_secret(project, cli, receiver) -> None:  # noqa: ANN001
    config = EVENTS_ON_DUCKDB.replace("events_src", "leaky") + lineage_config(
        receiver.url, api_key="lineage-api-key-7731"
    )
    root = project(config, {"leaky": LEAKY_SOURCE})
    _secrets(root, "leaky")
    run = cli("pipeline", "run", "-s", "leaky", "-y", cwd=root)
    assert run.returncode == 1, run.stderr[-2000:]
    start, fail = (validate(e) for e in receiver.wait_for(2))
    assert [start.eventType.value, fail.eventType.value] == ["START", "FAIL"]
    error = fail.run.facets["errorMessage"]
    assert "ValueError: the API refused key ***" in error.message
    assert error.programmingLanguage == "python" and "ValueError" in error.stackTrace
    assert fail.run.runId == run_uuid(_show(cli, root)["run"]["run_id"])
    for body in receiver.raw:  # the planted secret, the URL password and the API key
        assert PLANTED not in body and "lineage-api-key-7731" not in body
    assert all(h["Authorization"] == "Bearer lineage-api-key-7731" for h in receiver.headers)


def test_a_terminated_run_sends_abort(project, templates, receiver, blocking_run) -> None:  # noqa: ANN001
    config = EVENTS_ON_DUCKDB.replace("events_src", "slow") + lineage_config(receiver.url)
    root = project(config, {"slow": templates["blocking"]})
    proc = blocking_run(root, "slow")
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=120)
    start, abort = (validate(e) for e in receiver.wait_for(2))
    assert [start.eventType.value, abort.eventType.value] == ["START", "ABORT"]
    assert abort.run.runId == start.run.runId


def test_an_unreachable_server_never_fails_the_run(project, templates, cli) -> None:  # noqa: ANN001
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = EVENTS_ON_DUCKDB + lineage_config(f"http://127.0.0.1:{port}").replace(
        'transport = "http"', 'transport = "http"\ntimeout = 2'
    )
    root = project(config, {"events_src": templates["events"]})
    run = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "lineage.send_failed" in run.stderr
    assert _show(cli, root)["run"]["status"] == "completed"


def test_the_file_transport_appends_one_valid_event_per_line(project, templates, cli) -> None:  # noqa: ANN001
    table = '\n[dlt_ops.lineage]\ntransport = "file"\npath = "lineage/events.jsonl"\n'
    root = project(EVENTS_ON_DUCKDB + table, {"events_src": templates["events"]})
    for _ in range(2):
        assert cli("pipeline", "run", "-s", "events_src", "-y", cwd=root).returncode == 0
    lines = (root / "lineage" / "events.jsonl").read_text().splitlines()
    events = [validate(json.loads(line)) for line in lines]
    assert [e.eventType.value for e in events] == ["START", "COMPLETE"] * 2
    assert events[0].run.runId != events[2].run.runId


def test_a_server_that_never_answers_costs_the_run_at_most_the_timeout(
    project, templates, cli
) -> None:  # noqa: ANN001
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)  # accepts connections (the kernel does) and never answers a byte
    held: list[socket.socket] = []
    done = threading.Event()

    def hold() -> None:
        listener.settimeout(0.2)
        while not done.is_set():
            try:
                held.append(listener.accept()[0])
            except TimeoutError:
                continue

    threading.Thread(target=hold, daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    config = EVENTS_ON_DUCKDB + lineage_config(url) + "timeout = 1\n"
    root = project(config, {"events_src": templates["events"]})
    try:  # unbounded, the run would hang here until the subprocess timeout fails the test
        run = cli("pipeline", "run", "-s", "events_src", "-y", cwd=root, timeout=120)
    finally:
        done.set()
        for conn in held:
            conn.close()
        listener.close()
    assert run.returncode == 0, run.stderr[-2000:]
    assert "lineage.flush_timed_out" in run.stderr or "lineage.send_failed" in run.stderr
    assert _show(cli, root)["run"]["status"] == "completed"


def test_a_run_inside_an_airflow_task_names_it_as_parent(project, templates, cli, receiver) -> None:  # noqa: ANN001
    from dlt_ops.lineage.ids import orchestrator_uuid

    root = project(
        EVENTS_ON_DUCKDB + lineage_config(receiver.url), {"events_src": templates["events"]}
    )
    env = {"AIRFLOW_CTX_DAG_ID": "loads", "AIRFLOW_CTX_DAG_RUN_ID": "manual__2026-01-01",
           "AIRFLOW_CTX_TASK_ID": "events_src"}  # fmt: skip
    assert cli("pipeline", "run", "-s", "events_src", "-y", cwd=root, env=env).returncode == 0
    for event in (validate(e) for e in receiver.wait_for(2)):
        parent = event.run.facets["parent"]
        assert (parent.job.namespace, parent.job.name) == ("airflow", "loads.events_src")
        assert parent.run.runId == orchestrator_uuid(
            "airflow", "loads:manual__2026-01-01:events_src"
        )
        assert parent.root.run.runId == parent.run.runId
