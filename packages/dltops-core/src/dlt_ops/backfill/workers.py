"""``--workers N`` on multi-writer engines: N worker subprocesses claiming chunks via the CAS.

The parent seeds the plan, starts ``python -m dlt_ops.backfill.workers <json>`` N times and
renders the chunk events each worker prints on stdout (one JSON line per event). Workers share
nothing but the destination: each has its own token (``<invocation token>/w<k>``), state
session, lease keeper, load lock and per-chunk dlt working directories.

Stopping: without ``--continue-on-error`` the first final failure makes the parent create a
stop file that every worker checks before its next claim. Ctrl-C reaches the whole process
group (each worker demotes its running chunk to ``failed``); SIGTERM to the parent is
forwarded to the workers.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from dlt_ops.backfill.executor import BackfillOptions, ChunkEvent, ChunkWorker, Emit
from dlt_ops.backfill.plan import WORKDIR, BackfillPlan
from dlt_ops.errors import BackfillError, DltOpsError
from dlt_ops.log import bound_contextvars, get_logger

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig

log = get_logger(__name__)


def _spec(
    plan: BackfillPlan, options: BackfillOptions, root: Path, token: str, stop: Path
) -> dict[str, Any]:
    return {
        "root": str(root),
        "source": plan.source,
        "from": plan.window.start.isoformat(),
        "to": plan.window.end.isoformat(),
        "chunk": plan.chunk_label,
        "resources": list(plan.resources),
        "dataset": options.dataset,
        "lease_s": options.lease.total_seconds(),
        "max_attempts": options.max_attempts,
        "continue_on_error": options.continue_on_error,
        "token": token,
        "stop_file": str(stop),
    }


def _pump(stream: IO[str], out: queue.Queue[tuple[int, str | None]], k: int) -> None:
    for line in stream:
        out.put((k, line))
    out.put((k, None))


def run_worker_processes(
    config: ProjectConfig, plan: BackfillPlan, options: BackfillOptions, token: str, emit: Emit
) -> None:
    """Run ``options.workers`` worker subprocesses to completion, forwarding their events."""
    stop = config.root / WORKDIR / plan.backfill_id / f"stop-{token.replace(':', '_')}"
    stop.parent.mkdir(parents=True, exist_ok=True)
    stop.unlink(missing_ok=True)
    events: queue.Queue[tuple[int, str | None]] = queue.Queue()
    procs: list[subprocess.Popen[str]] = []
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    previous = signal.getsignal(signal.SIGTERM)

    def forward(signum: int, frame: object) -> None:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        raise KeyboardInterrupt(f"terminated by signal {signum}")

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, forward)
    errors: list[str] = []
    siblings = f"{token}/"
    try:
        for k in range(options.workers):
            spec = _spec(plan, options, config.root, f"{token}/w{k}", stop)
            cmd = [sys.executable, "-m", "dlt_ops.backfill.workers", json.dumps(spec)]
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
            procs.append(proc)
            assert proc.stdout is not None
            threading.Thread(target=_pump, args=(proc.stdout, events, k), daemon=True).start()
        open_streams = len(procs)
        while open_streams:
            k, line = events.get()
            if line is None:
                open_streams -= 1
                continue
            try:
                data = json.loads(line)
            except ValueError:
                log.debug("backfill.worker_output", worker=k, line=line.rstrip())
                continue
            if data.get("event") == "error":
                errors.append(f"worker {k}: {data.get('message')}")
                continue
            event = ChunkEvent.from_json(data)
            if event.kind in ("held", "skipped") and (event.holder or "").startswith(siblings):
                continue  # a chunk one of our own workers holds or completed: not news
            if event.kind == "failed" and not options.continue_on_error:
                stop.touch()
            emit(event)
        for proc in procs:
            proc.wait()
    except BaseException:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in procs:
            proc.wait()
        raise
    finally:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, previous)
        stop.unlink(missing_ok=True)
    crashed = [f"worker {k} exited {p.returncode}" for k, p in enumerate(procs) if p.returncode]
    if errors or crashed:
        raise BackfillError(
            "backfill worker(s) failed: " + "; ".join(errors or crashed) + ". Completed chunks "
            "are recorded; re-run the same backfill to resume."
        )


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"terminated by signal {signum}")


def _orphaned() -> None:
    """Stop a worker whose parent is gone: no traceback, and no "Exception ignored" at exit
    (stdout points at /dev/null from now on). Its chunk stays claimed by this pid, which
    exits: a re-run on this host reclaims it at once."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    raise KeyboardInterrupt("backfill parent process is gone")


def worker_main(spec: dict[str, Any]) -> int:
    """One worker subprocess: claim and run chunks, print events as JSON lines."""
    from dlt_ops.backfill.session import open_state
    from dlt_ops.config import load_project_config
    from dlt_ops.destinations import project_registry
    from dlt_ops.log import LogFormat, configure_logging
    from dlt_ops.runner.prepare import prepare_run

    configure_logging(LogFormat.json)
    signal.signal(signal.SIGTERM, _interrupt)
    config = load_project_config(Path(spec["root"]))
    registry = project_registry(config)
    plan = BackfillPlan.build(
        spec["source"], spec["from"], spec["to"], spec["chunk"], spec["resources"]
    )
    options = BackfillOptions(
        dataset=spec["dataset"],
        lease=timedelta(seconds=spec["lease_s"]),
        max_attempts=spec["max_attempts"],
        continue_on_error=spec["continue_on_error"],
    )
    stop = Path(spec["stop_file"])
    lock = threading.Lock()
    parent = os.getppid()

    def emit(event: ChunkEvent) -> None:
        with lock:
            try:
                sys.stdout.write(event.to_json() + "\n")
                sys.stdout.flush()
            except BrokenPipeError:  # the parent died (SIGKILL): nobody reads; stop quietly
                _orphaned()

    def should_stop() -> bool:  # an orphan claims nothing more (its parent cannot report it)
        return stop.exists() or os.getppid() != parent

    # once per worker process: every chunk it runs reuses the prepared source and gates
    prepared = prepare_run(
        registry, config, plan.source, resources=plan.resources, dataset=options.dataset,
        trigger_source="backfill",
    )  # fmt: skip
    where = prepared.where
    # the token names this process (its own pid), so a re-run on this host can tell it died
    session, state = open_state(registry, config, where, f"{spec['token']}:{os.getpid()}")
    bound = bound_contextvars(backfill_id=plan.backfill_id, worker=spec["token"])
    with bound, session:
        ChunkWorker(
            registry, config, plan, state, options, emit, should_stop, prepared=prepared
        ).run()
    return 0


def main(argv: list[str]) -> int:
    """``python -m dlt_ops.backfill.workers <json spec>``."""
    try:
        return worker_main(json.loads(argv[0]))
    except KeyboardInterrupt:
        return 130
    except DltOpsError as exc:
        sys.stdout.write(json.dumps({"event": "error", "message": str(exc)}) + "\n")
        sys.stdout.flush()
        return exc.exit_code


if __name__ == "__main__":
    from dlt_ops.fast_exit import leave

    exit_code = main(sys.argv[1:])
    leave(exit_code)  # a worker has dlt loaded: its teardown would cost ~0.2 s
    raise SystemExit(exit_code)
