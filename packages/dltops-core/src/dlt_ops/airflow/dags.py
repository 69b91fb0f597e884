"""The DAG factories. Parse time reads ``.dlt/config.toml`` and scans the project's syntax
trees (Phase 1): a source module that would fail, or do anything, on import is never imported
while Airflow parses the DAG file.

Tasks of one source never run against one working directory at once: the per-resource tasks of
a source are chained one after another in a DAG run, every task waits on the source's run
lease (it queues instead of failing), and with ``pool=``/``pools=`` the tasks take a slot of an
Airflow pool (one per source with ``pools=``), so they queue in Airflow rather than hold a
worker slot while they wait.

Every task runs with dlt's own Airflow config provider off (see :mod:`.providers`) unless the
factory was given ``dlt_airflow_secrets=True``. DAG and task defaults are the factory's,
overridden by ``dag_kwargs`` and ``default_args`` (the user wins).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from airflow.sdk import DAG, get_current_context, get_parsing_context, task
from airflow.sdk.exceptions import AirflowSkipException

from dlt_ops.airflow.pools import (
    CHECK_TASK_ID,
    DEFAULT_POOL,
    Pools,
    check_pools,
    select_sources,
    source_pools,
)
from dlt_ops.airflow.providers import with_dlt_airflow_provider
from dlt_ops.cron import DEFAULT_ZONE, TAG_CRON, cron_text, schedule_zone
from dlt_ops.errors import UsageError

DEFAULT_START = datetime(2024, 1, 1, tzinfo=UTC)
#: Wait between a failed task and its retry (Airflow's own default is 300 s).
DEFAULT_RETRY_DELAY = timedelta(seconds=60)


def _dag_args(
    defaults: dict[str, Any],
    dag_kwargs: Mapping[str, Any] | None,
    task_defaults: dict[str, Any],
    default_args: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The DAG's keyword arguments: the factory's ``defaults`` with ``dag_kwargs`` over them,
    and ``default_args`` = the factory's task defaults, then ``dag_kwargs["default_args"]``,
    then ``default_args`` (the user wins at each step)."""
    given = dict(dag_kwargs or {})
    tasks = {**task_defaults, **dict(given.pop("default_args", None) or {}),
             **dict(default_args or {})}  # fmt: skip
    return {**defaults, **given, "default_args": tasks}


def _checked(fn: Callable[..., Any], keep_provider: bool) -> Callable[..., Any]:
    return with_dlt_airflow_provider(fn, keep_provider)


def schedule_to_airflow(
    schedule: str, timezone: str | None = None, *, data_interval: bool = False
) -> Any:
    """The Airflow schedule of a dlt-ops schedule (``None``: manual, trigger-only): the cron
    string in UTC, else a cron timetable in the schedule's zone (Airflow's timetables use
    croniter too, with the same DST rules as dlt-ops' own scheduler)."""
    cron = cron_text(schedule)
    zone = schedule_zone(schedule, timezone)
    if cron is None or zone == DEFAULT_ZONE:
        return cron
    from airflow.sdk import CronDataIntervalTimetable, CronTriggerTimetable

    if data_interval:  # runs bounded to [previous fire, fire)
        return CronDataIntervalTimetable(cron, timezone=zone)
    return CronTriggerTimetable(cron, timezone=zone)


def _dag_id(prefix: str, schedule: str, zone: str = DEFAULT_ZONE) -> str:
    suffix = "" if zone == DEFAULT_ZONE else "_" + zone.replace("/", "_").replace("+", "plus")
    if schedule in TAG_CRON:
        return f"{prefix}_{schedule.lstrip('@')}{suffix}"
    text = str(cron_text(schedule))
    fields = "_".join(text.replace("*", "x").replace("/", "every").split())
    return f"{prefix}_cron_{fields}{suffix}"


def _window(conf: Mapping[str, Any], native: tuple[Any, Any] | None) -> Any:
    """``dag_run.conf`` ``start_date``/``end_date`` (ISO, tz-aware) override the native
    interval edge by edge; no override and no native interval: no window."""
    from dlt_ops.runner.window import Window, parse_bound

    start, end = conf.get("start_date"), conf.get("end_date")
    if not start and not end:
        return None if native is None else Window(native[0], native[1])
    lo = parse_bound(start, "start_date") if start else (native[0] if native else None)
    hi = parse_bound(end, "end_date") if end else (native[1] if native else None)
    if lo is None or hi is None:
        raise ValueError("a date override needs both edges: this DAG has no data interval")
    return Window(lo, hi)


def _orchestrator_run(context: Mapping[str, Any] | None = None) -> Any:
    """This task's Airflow run for the ledger row: ``<dag_id>/<run_id>`` and the try number
    (``None`` when the callable runs outside a task)."""
    from dlt_ops.orchestration import OrchestratorRun

    if context is None:
        try:
            context = get_current_context()
        except RuntimeError:  # no task context: called by hand
            return None
    dag_run = context["dag_run"]
    return OrchestratorRun(f"{dag_run.dag_id}/{dag_run.run_id}", context["ti"].try_number)


def run_scheduled(
    project_root: str,
    source: str,
    resource: str | None,
    known_sources: list[str],
    use_data_interval: bool,
) -> dict[str, Any]:
    """One task: honour ``dag_run.conf`` (``source``, ``resources``, ``start_date``,
    ``end_date``), then run through the ledger as ``trigger_source = airflow``, the Airflow
    run id in the ledger's run id."""
    from dlt_ops.orchestration import run_source

    context = get_current_context()
    dag_run = context["dag_run"]
    conf: Mapping[str, Any] = dag_run.conf or {}
    wanted = conf.get("source")
    if wanted and wanted not in known_sources:
        raise ValueError(f"unknown source {wanted!r} in dag_run.conf; known: {known_sources}")
    if wanted and wanted != source:
        raise AirflowSkipException(f"source {source!r} not selected")
    resources: tuple[str, ...] = (resource,) if resource else ()
    picked = conf.get("resources")
    if picked and wanted == source:
        if resource is not None and resource not in picked:
            raise AirflowSkipException(f"resource {resource!r} not selected ({picked})")
        if resource is None:
            resources = tuple(picked)
    native = None
    if use_data_interval and context.get("data_interval_start") is not None:
        native = (context["data_interval_start"], context["data_interval_end"])
    ti = context["ti"]
    run_id = f"airflow:{dag_run.dag_id}:{dag_run.run_id}:{ti.task_id}:{ti.try_number}"
    record = run_source(project_root, source, resources=resources, window=_window(conf, native),
                        trigger_source="airflow", run_id=run_id, wait=math.inf,
                        orchestrator=_orchestrator_run(context))  # fmt: skip
    return {"run_id": record.run_id, "status": record.status,
            "records_loaded": record.records_loaded}  # fmt: skip


def _scheduled_task(known_sources: list[str], keep_provider: bool) -> Any:
    """The ``@task`` of one schedule DAG's source tasks (each call site overrides its task id
    and pool). The DAG's source names are bound here, not passed to each task: Airflow walks
    every task argument for XCom references and serializes it with the task, so a list of
    every source in each task made parsing and the serialized DAG grow as sources²."""
    names = list(known_sources)

    def run_source(project_root: str, source: str, resource: str | None,
                   use_data_interval: bool) -> dict[str, Any]:  # fmt: skip
        return run_scheduled(project_root, source, resource, names, use_data_interval)

    run_source.__doc__ = run_scheduled.__doc__
    # multiple_outputs as Airflow infers it from the dict return, without the per-task look-up
    return task(_checked(run_source, keep_provider), multiple_outputs=True)


def build_schedule_dags(
    project_root: Path | str,
    *,
    dag_prefix: str = "dlt",
    start_date: datetime | None = None,
    catchup: bool = False,
    pool: str | None = None,
    use_data_interval: bool = False,
    dag_kwargs: Mapping[str, Any] | None = None,
    sources: Iterable[str] | None = None,
    pools: Pools = None,
    retries: int = 0,
    retry_delay: timedelta = DEFAULT_RETRY_DELAY,
    default_args: Mapping[str, Any] | None = None,
    dlt_airflow_secrets: bool = False,
    check_pools_exist: bool = True,
    cleanup_data_dir: str | Path | None = None,
    cleanup_after_days: int = 3,
) -> dict[str, DAG]:
    """One DAG per schedule, a task per source (or per Phase-1 resource, chained).

    ``use_data_interval`` bounds each run to the DAG run's data interval (every incremental
    of the source must take a window); by default runs are unbounded and their incremental
    cursors carry on, and ``dag_run.conf`` ``start_date``/``end_date`` bound a run on demand.
    ``sources`` narrows the DAGs to those sources; ``pools`` puts each source's tasks in a
    pool of its own (a mapping source → pool, or a prefix: ``<prefix><source>``), ``pool``
    the others. ``cleanup_data_dir`` (0.1's option) ends each DAG with a
    ``cleanup_old_dlt_files`` task sweeping ``dlt_*`` scratch older than
    ``cleanup_after_days`` there. Usage in a DAG file:
    ``globals().update(build_schedule_dags(PROJECT))``.
    """
    from dlt_ops.config import load_project_config
    from dlt_ops.project.discovery import discover

    if dag_kwargs and "dag_id" in dag_kwargs:
        raise UsageError("dag_kwargs cannot set dag_id: build_schedule_dags makes one DAG per "
                         "schedule; use dag_prefix= to name them.")  # fmt: skip
    root = Path(project_root).resolve()
    config = load_project_config(root)
    project = discover(root)
    selected = select_sources(project.sources, sources)
    pool_of = source_pools(selected, pools, pool)
    groups: dict[tuple[str, str], list[str]] = {}  # one DAG per schedule and time zone
    for name in selected:
        cfg = config.source(name)
        schedule = str(cfg.schedule) if cfg.schedule_valid else "@manual"
        zone = schedule_zone(schedule, cfg.timezone) if cfg.schedule_valid else DEFAULT_ZONE
        groups.setdefault((schedule, zone), []).append(name)
    dags: dict[str, DAG] = {}
    for schedule, zone in sorted(groups):
        dag_id = _dag_id(dag_prefix, schedule, zone)
        cron = schedule_to_airflow(schedule, zone, data_interval=use_data_interval)
        defaults = {"dag_id": dag_id, "schedule": cron, "catchup": catchup,
                    "start_date": start_date or DEFAULT_START, "max_active_runs": 1,
                    "tags": ["dlt-ops", schedule]}  # fmt: skip
        task_defaults = {"retries": retries, "retry_delay": retry_delay}
        with DAG(**_dag_args(defaults, dag_kwargs, task_defaults, default_args)) as dag:
            members = groups[(schedule, zone)]
            used = sorted({pool_of[s] for s in members} - {DEFAULT_POOL})
            guard = None
            if used and check_pools_exist:  # fails the run instead of waiting on a lost pool
                guard = task(task_id=CHECK_TASK_ID, pool=DEFAULT_POOL, retries=0)(
                    _checked(check_pools, dlt_airflow_secrets))(used, str(root))  # fmt: skip
            last_tasks = []
            run_task = _scheduled_task(members, dlt_airflow_secrets)
            for source in members:
                resources = project.sources[source].static_resources or (None,)
                previous = guard
                for resource in resources:
                    task_id = f"{source}_{resource}" if resource else source
                    op = run_task.override(task_id=task_id, pool=pool_of[source])(
                        str(root), source, resource, use_data_interval and cron is not None
                    )
                    if previous is not None:
                        previous >> op
                    previous = op
                last_tasks.append(previous)
            if cleanup_data_dir is not None:
                from dlt_ops.airflow.tasks import cleanup_old_dlt_files

                last_tasks >> cleanup_old_dlt_files(str(cleanup_data_dir), cleanup_after_days)
        dags[dag_id] = dag
    return dags


def _seed(project_root: str, source: str, from_: str, to: str, chunk: str,
          dataset: str | None, pools: list[str] | None = None) -> list[int]:  # fmt: skip
    from dlt_ops.orchestration import seed_backfill

    if pools:  # before any chunk task queues in a pool that may not exist
        check_pools(pools, project_root)
    return seed_backfill(project_root, source, from_, to, chunk, dataset=dataset)


def _chunk(project_root: str, source: str, from_: str, to: str, chunk: str,
           dataset: str | None, lease: str, index: int) -> dict[str, object]:  # fmt: skip
    """The XCom: ``outcome`` (``ran``, ``skipped`` when already completed, ``held``,
    ``lost``), the chunk's ``status``, ``index``, dlt-ops ``run_id``, ``backfill_id`` and
    ``records_loaded`` (when this task ran it)."""
    from dlt_ops.orchestration import run_backfill_chunk_outcome

    # the DAG's seed task seeded the plan (this task maps over its result): no re-seed
    return run_backfill_chunk_outcome(
        project_root, source, from_, to, chunk, index, dataset=dataset, lease=lease,
        orchestrator=_orchestrator_run(), seeded=True,
    ).as_dict()  # fmt: skip


def _check(project_root: str, source: str, from_: str, to: str, chunk: str,
           dataset: str | None) -> int:  # fmt: skip
    from dlt_ops.orchestration import check_backfill

    return check_backfill(project_root, source, from_, to, chunk, dataset=dataset)


def _backfill_pool(root: str, source: str, pools: Pools, pool: str | None) -> str:
    """The chunk tasks' pool. As ``build_schedule_dags(sources=)``, an unknown source fails
    the parse, and one pools mapping for the whole project serves both factories (a typo in
    it still fails): checked against the project's sources where Airflow parses DAG files.
    A task's own parse of the file (Airflow's parsing context names its DAG) builds the same
    DAG without scanning the project again: the dag-processor's parse checked it."""
    if get_parsing_context().dag_id is None:
        from dlt_ops.project.discovery import discover

        known = sorted(discover(Path(root)).sources)
        select_sources(known, [source])
        return source_pools(known, pools, pool)[source]
    mine = pools if pools is None or isinstance(pools, str) else {
        name: value for name, value in pools.items() if name == source}  # fmt: skip
    return source_pools([source], mine, pool)[source]


def build_backfill_dag(
    project_root: Path | str,
    source: str,
    *,
    from_: datetime | str,
    to: datetime | str,
    chunk: str,
    dataset: str | None = None,
    lease: str = "10m",
    dag_id: str | None = None,
    retries: int = 2,
    pool: str | None = None,
    max_active_tis_per_dag: int | None = None,
    dag_kwargs: Mapping[str, Any] | None = None,
    pools: Pools = None,
    retry_delay: timedelta = DEFAULT_RETRY_DELAY,
    default_args: Mapping[str, Any] | None = None,
    dlt_airflow_secrets: bool = False,
    check_pools_exist: bool = True,
) -> DAG:
    """A trigger-only DAG: ``seed`` → ``run_chunk`` mapped over every chunk not completed yet
    → ``check``. Each mapped task claims its chunk through ``_dlt_backfills``, so the chunks
    spread over every Airflow worker, each runs exactly once, and a cleared or retried task
    resumes (a completed chunk is skipped) rather than reloads. ``source`` must be one of the
    project's sources (checked at parse time); one DAG backfills one source. ``pools`` (a
    mapping over the project's sources, or a prefix) or ``pool`` puts the chunk tasks in a
    pool."""
    from dlt_ops.backfill.plan import BackfillPlan

    def iso(value: datetime | str) -> str:
        return value.isoformat() if isinstance(value, datetime) else value

    start, end = iso(from_), iso(to)
    plan = BackfillPlan.build(source, start, end, chunk)  # usage errors at parse time
    root = str(Path(project_root).resolve())
    chunk_pool = _backfill_pool(root, source, pools, pool)
    guarded = [chunk_pool] if chunk_pool != DEFAULT_POOL and check_pools_exist else None
    defaults = {"dag_id": dag_id or f"dlt_backfill_{source}_{plan.backfill_id}",
                "schedule": None, "start_date": DEFAULT_START, "catchup": False,
                "tags": ["dlt-ops", "backfill", source]}  # fmt: skip
    task_defaults = {"retries": retries, "retry_delay": retry_delay}
    keep = dlt_airflow_secrets
    with DAG(**_dag_args(defaults, dag_kwargs, task_defaults, default_args)) as dag:
        seeded = task(task_id="seed")(_checked(_seed, keep))(root, source, start, end, chunk,
                                                              dataset, guarded)  # fmt: skip
        mapped = task(
            task_id="run_chunk", pool=chunk_pool, max_active_tis_per_dag=max_active_tis_per_dag,
        )(_checked(_chunk, keep)).partial(
            project_root=root, source=source, from_=start, to=end, chunk=chunk,
            dataset=dataset, lease=lease,
        ).expand(index=seeded)  # fmt: skip
        # a retry cannot change whether the window is covered
        checked = task(task_id="check", trigger_rule="all_done", retries=0)(
            _checked(_check, keep))(root, source, start, end, chunk, dataset)  # fmt: skip
        mapped >> checked
    return dag
