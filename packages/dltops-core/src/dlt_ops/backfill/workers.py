"""``--workers N`` on multi-writer engines: N worker processes claiming chunks via the CAS.

The parent seeds the plan, starts N workers forked from the fork server of
:mod:`dlt_ops.isolation` (dlt already imported there, so no worker pays for its imports; none
inherits the parent's threads or connections) and renders the chunk events each sends back
over its pipe (one JSON text per event). Workers share nothing but the destination: each has
its own token (``<invocation token>/w<k>``), state session, lease keeper, load lock and
per-chunk dlt working directories. ``python -m dlt_ops.backfill.workers <json>`` runs one
worker by hand, its events on stdout.

Stopping: without ``--continue-on-error`` the first final failure makes the parent create a
stop file that every worker checks before its next claim. Ctrl-C reaches the whole process
group (each worker demotes its running chunk to ``failed``); SIGTERM to the parent is
forwarded to the workers.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from dlt_ops.backfill.executor import BackfillOptions, ChunkEvent, ChunkWorker, Emit
from dlt_ops.backfill.plan import WORKDIR, BackfillPlan
from dlt_ops.errors import BackfillError, DltOpsError
from dlt_ops.log import bound_contextvars, get_logger

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

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


def run_worker_processes(
    config: ProjectConfig,
    plan: BackfillPlan,
    options: BackfillOptions,
    token: str,
    emit: Emit,
    *,
    engines: Sequence[str] = (),
    modules: Sequence[str] = (),
) -> None:
    """Run ``options.workers`` worker processes to completion, forwarding their events
    (``engines`` and ``modules`` are preloaded by the fork server if it is not running yet)."""
    from multiprocessing.connection import wait

    from dlt_ops.isolation import run_context, start

    ctx = run_context(engines, modules)
    stop = config.root / WORKDIR / plan.backfill_id / f"stop-{token.replace(':', '_')}"
    stop.parent.mkdir(parents=True, exist_ok=True)
    stop.unlink(missing_ok=True)
    procs: list[BaseProcess] = []
    readers: dict[Connection[Any, str], int] = {}
    env = dict(os.environ)
    previous = signal.getsignal(signal.SIGTERM)

    def forward(signum: int, frame: object) -> None:
        for proc in procs:
            if proc.is_alive():
                proc.terminate()  # SIGTERM: the worker demotes its running chunk
        raise KeyboardInterrupt(f"terminated by signal {signum}")

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, forward)
    errors: list[str] = []
    siblings = f"{token}/"
    try:
        for k in range(options.workers):
            spec = _spec(plan, options, config.root, f"{token}/w{k}", stop)
            reader, writer = ctx.Pipe(duplex=False)
            proc = ctx.Process(  # type: ignore[attr-defined]
                target=worker_process, args=(spec, env, writer), name=f"backfill worker {k}"
            )
            start(proc)
            writer.close()  # the worker holds the only writer: EOF once it exits
            procs.append(proc)
            readers[reader] = k
        while readers:
            for ready in wait(list(readers)):
                conn = cast("Connection[Any, str]", ready)
                k = readers[conn]
                try:
                    line = conn.recv()
                except EOFError:
                    conn.close()
                    del readers[conn]
                    continue
                _forward_event(line, k, errors, siblings, stop, options, emit)
        for proc in procs:
            proc.join()
    except BaseException:
        for proc in procs:
            if proc.is_alive() and proc.pid is not None:
                os.kill(proc.pid, signal.SIGINT)
        for proc in procs:
            proc.join()
        raise
    finally:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, previous)
        stop.unlink(missing_ok=True)
    crashed = [f"worker {k} exited {p.exitcode}" for k, p in enumerate(procs) if p.exitcode]
    if errors or crashed:
        raise BackfillError(
            "backfill worker(s) failed: " + "; ".join(errors or crashed) + ". Completed chunks "
            "are recorded; re-run the same backfill to resume."
        )


def _forward_event(
    line: str,
    k: int,
    errors: list[str],
    siblings: str,
    stop: Path,
    options: BackfillOptions,
    emit: Emit,
) -> None:
    """One event of worker ``k``: an error is kept, a chunk event rendered (a final failure
    without ``--continue-on-error`` creates the stop file)."""
    try:
        data = json.loads(line)
    except ValueError:
        log.debug("backfill.worker_output", worker=k, line=line.rstrip())
        return
    if data.get("event") == "error":
        errors.append(f"worker {k}: {data.get('message')}")
        return
    event = ChunkEvent.from_json(data)
    if event.kind in ("held", "skipped") and (event.holder or "").startswith(siblings):
        return  # a chunk one of our own workers holds or completed: not news
    if event.kind == "failed" and not options.continue_on_error:
        stop.touch()
    emit(event)


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


def worker_main(spec: dict[str, Any], send: Callable[[str], None]) -> int:
    """One worker process: claim and run chunks, ``send`` each event as JSON text."""
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
                send(event.to_json())
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


def _to_stdout(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _guarded(spec: dict[str, Any], send: Callable[[str], None]) -> int:
    """:func:`worker_main`, its refusal sent as an ``error`` event; the exit code."""
    try:
        return worker_main(spec, send)
    except KeyboardInterrupt:
        return 130
    except DltOpsError as exc:
        try:
            send(json.dumps({"event": "error", "message": str(exc)}))
        except OSError:  # the parent is gone
            pass
        return exc.exit_code


def worker_process(spec: dict[str, Any], env: dict[str, str], conn: Any) -> None:
    """A worker forked from the fork server: the parent's environment, events over ``conn``."""
    from dlt_ops.isolation import adopt_environment

    adopt_environment(env)
    code = _guarded(spec, conn.send)
    conn.close()
    sys.exit(code)


def main(argv: list[str]) -> int:
    """``python -m dlt_ops.backfill.workers <json spec>``: one worker, events on stdout."""
    return _guarded(json.loads(argv[0]), _to_stdout)


if __name__ == "__main__":
    from dlt_ops.fast_exit import leave

    exit_code = main(sys.argv[1:])
    leave(exit_code)  # a worker has dlt loaded: its teardown would cost ~0.2 s
    raise SystemExit(exit_code)
