"""``build_definitions``: a project's sources as Dagster assets, schedules and partitioned
backfill jobs. Load time reads ``.dlt/config.toml`` and scans the project's syntax trees
(Phase 1): a source module that would fail, or do anything, on import is never imported while
Dagster loads the code location.

* one asset per Phase-1 resource, key ``[<source>, <resource>]``, group ``<source>``, in one
  multi-asset per source (one step runs one source, so a run never races its own working dir);
* a ``ScheduleDefinition`` per schedule of the project (``@manual`` has none);
* for a source with ``backfill_start``/``backfill_end``, a time-window partitioned
  multi-asset (keys ``[<source>_backfill, <resource>]``) and its asset job
  ``<source>_backfill``, whose partitions are the chunks of that fixed window (see
  :mod:`dlt_ops.dagster.runs`); its multi-run backfill policy launches one run per partition,
  in parallel, and Dagster shows each partition's status.
"""

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg

from dlt_ops.config import ProjectConfig
from dlt_ops.cron import DEFAULT_ZONE, TAG_CRON, cron_text, schedule_zone
from dlt_ops.dagster import runs
from dlt_ops.errors import DltOpsError
from dlt_ops.project.model import ModuleFacts, Project, ResourceDef, SourceInfo

#: Pool names: ``dlt_ops/<engine>/<dataset>``; give each a limit of 1 in the instance config.
POOL_PREFIX = "dlt_ops"


def _ident(text: str) -> str:
    """A Dagster name (op, job, key part): letters, digits and underscores."""
    return re.sub(r"[^A-Za-z0-9_]", "_", text)


def concurrency_pool(
    config: ProjectConfig, source: str, single_writer: dict[str, bool] | None = None
) -> str | None:
    """The Dagster pool (concurrency key) of ``source``'s steps: one per destination dataset
    whose adapter declares ``single_writer`` (an embedded file engine: one writing process per
    file), ``None`` elsewhere (server engines: partitions and sources run in parallel; a
    core-tier engine has no adapter to say, and its runs hold the source's file lease anyway).
    ``single_writer`` caches the answer per engine across the sources of one load."""
    from dlt_ops.destinations import engine_name, load_adapter, project_registry

    try:
        engine = engine_name(config.destination_for(source))
        dataset = config.dataset_for(source)
    except DltOpsError:
        return None  # the run itself reports the missing config as its failure
    known = {} if single_writer is None else single_writer
    if engine not in known:
        try:
            adapter = load_adapter(project_registry(config), engine)
            known[engine] = adapter.capabilities.single_writer
        except DltOpsError:  # no adapter installed (core tier): nothing declares one writer
            known[engine] = False
    return f"{POOL_PREFIX}/{_ident(engine)}/{_ident(dataset)}" if known[engine] else None


@dataclass(frozen=True)
class _Modules:
    """One pipeline's scanned modules, its source modules by path: a project whose 1,000
    sources share a pipeline looked each one up in a list (10^6 path compares, ~2 s)."""

    by_path: dict[Path, list[ModuleFacts]]
    resource_modules: tuple[ModuleFacts, ...]

    @classmethod
    def of(cls, project: Project) -> "dict[str, _Modules]":
        found = {}
        for p in project.pipelines:
            by_path: dict[Path, list[ModuleFacts]] = {}
            for m in p.source_modules:
                by_path.setdefault(m.path, []).append(m)
            found[p.name] = cls(by_path, tuple(p.resource_modules))
        return found

    def of_source(self, info: SourceInfo) -> tuple[ModuleFacts, ...]:
        """The source's own module(s), then the pipeline's resource modules."""
        return (*self.by_path.get(info.module_path, ()), *self.resource_modules)


def _resource_defs(modules: _Modules, info: SourceInfo) -> dict[str, ResourceDef]:
    found: dict[str, ResourceDef] = {}
    for module in modules.of_source(info):
        for res in module.resources:
            found.setdefault(res.name, res)
    return found


def _cursors(modules: _Modules, info: SourceInfo) -> list[str]:
    return sorted({i.cursor for m in modules.of_source(info) for i in m.incrementals if i.cursor})


def _specs(
    project: Project, config: ProjectConfig, info: SourceInfo, modules: _Modules
) -> list[dg.AssetSpec]:
    """One spec per Phase-1 resource (a source with none: one spec for the whole source)."""
    defs = _resource_defs(modules, info)
    names = info.static_resources or (None,)
    try:
        dataset: str | None = config.dataset_for(info.name)
    except DltOpsError:
        dataset = None
    cursors = _cursors(modules, info)
    specs = []
    for name in names:
        meta: dict[str, Any] = {"dlt_ops/source": info.name, "dlt_ops/pipeline": info.pipeline}
        res = defs.get(name) if name else None
        where = info.module_path.relative_to(project.root)
        if name:
            meta["dlt_ops/table"] = name  # dlt's default table name is the resource's
            if dataset:
                meta["dagster/table_name"] = f"{dataset}.{name}"
        if res is not None:
            where = res.file.relative_to(project.root)
            meta["dlt_ops/defined_at"] = f"{where}:{res.lineno}"
            if res.columns is not None:
                meta["dlt_ops/columns"] = res.columns.text
        if cursors:
            meta["dlt_ops/incremental_cursors"] = ", ".join(cursors)
        what = f"resource '{name}'" if name else "every resource"
        specs.append(dg.AssetSpec(
            key=dg.AssetKey([_ident(info.name), _ident(name)] if name else [_ident(info.name)]),
            group_name=_ident(info.name), metadata=meta, kinds={"dlt"},
            description=f"dlt {what} of source '{info.name}' ({where}), run by dlt-ops.",
        ))  # fmt: skip
    return specs


def _resource_of(key: dg.AssetKey) -> str | None:
    return key.path[1] if len(key.path) > 1 else None


def _events(key_names: Mapping[dg.AssetKey, str | None],
            result: runs.StepResult) -> Iterator[dg.MaterializeResult]:  # fmt: skip
    for key, name in key_names.items():
        meta = {**result.common, **result.per_resource.get(name or "", {})}
        yield dg.MaterializeResult(asset_key=key, metadata=meta)


def _failure(exc: DltOpsError) -> dg.Failure:
    """The step failure: the ledger's error summary first (``RunFailedError``'s message)."""
    outcome = getattr(exc, "outcome", None)
    meta: dict[str, Any] = {"dlt_ops/error": type(exc).__name__}
    if outcome is not None:
        meta["dlt_ops/run_id"] = outcome.record.run_id
        meta["dlt_ops/status"] = outcome.record.status
        return dg.Failure(description=outcome.record.error_summary or str(exc), metadata=meta)
    return dg.Failure(description=str(exc), metadata=meta)


def _source_asset(root: Path, info: SourceInfo, specs: list[dg.AssetSpec],
                  pool: str | None) -> dg.AssetsDefinition:  # fmt: skip
    names = {s.key: _resource_by_ident(info, s.key) for s in specs}

    @dg.multi_asset(name=f"dlt_{_ident(info.name)}", specs=specs, can_subset=len(specs) > 1,
                    pool=pool, op_tags={"dlt_ops/source": info.name})  # fmt: skip
    def _run(context: dg.AssetExecutionContext) -> Iterator[Any]:
        selected = [k for k in names if k in context.selected_asset_keys]
        subset = tuple(str(names[k]) for k in selected if names[k]) if len(selected) < len(names)\
            else ()  # fmt: skip
        try:
            result = runs.run_asset_step(root, info.name, subset, context.run_id,
                                         try_number=context.retry_number + 1)  # fmt: skip
        except DltOpsError as exc:
            raise _failure(exc) from exc
        yield from _events({k: names[k] for k in selected}, result)

    return _run


def _resource_by_ident(info: SourceInfo, key: dg.AssetKey) -> str | None:
    part = _resource_of(key)
    return next((r for r in info.static_resources if _ident(r) == part), None)


def _partitions(config: ProjectConfig, source: str) -> dg.TimeWindowPartitionsDefinition:
    from dlt_ops.config.backfill_window import chunk_cron

    cfg = config.source(source)
    fmt = "%Y-%m-%d" if cfg.backfill_chunk.endswith("d") else "%Y-%m-%d-%H:%M"
    return dg.TimeWindowPartitionsDefinition(
        start=cfg.backfill_start, end=cfg.backfill_end,
        cron_schedule=chunk_cron(cfg.backfill_chunk), fmt=fmt, timezone="UTC",
    )  # fmt: skip


def _backfill_specs(info: SourceInfo, specs: list[dg.AssetSpec]) -> list[dg.AssetSpec]:
    """The backfill's assets: the source's, keyed under ``<source>_backfill`` (an asset key is
    either partitioned or not, and the source's own runs are unbounded)."""
    prefix = f"{_ident(info.name)}_backfill"
    return [s.replace_attributes(key=dg.AssetKey([prefix, *s.key.path[1:]]),
                                 description=f"{s.description} Backfill chunks, one a partition.")
            for s in specs]  # fmt: skip


def _backfill_job(root: Path, config: ProjectConfig, info: SourceInfo, specs: list[dg.AssetSpec],
                  pool: str | None, lease: str) -> tuple[dg.AssetsDefinition, Any]:  # fmt: skip
    """A time-window partitioned multi-asset (one partition = one chunk) with a multi-run
    backfill policy of one partition per run, and its asset job ``<source>_backfill``."""
    cfg = config.source(info.name)
    assert cfg.backfill_start is not None and cfg.backfill_end is not None
    window = (cfg.backfill_start, cfg.backfill_end, cfg.backfill_chunk)
    parts = _partitions(config, info.name)
    backfill_specs = _backfill_specs(info, specs)
    keys = {b.key: _resource_by_ident(info, s.key) for b, s in zip(backfill_specs, specs,
                                                                    strict=True)}  # fmt: skip

    @dg.multi_asset(name=f"dlt_{_ident(info.name)}_chunk", specs=backfill_specs, pool=pool,
                    partitions_def=parts, backfill_policy=dg.BackfillPolicy.multi_run(1),
                    op_tags={"dlt_ops/source": info.name})  # fmt: skip
    def _chunk(context: dg.AssetExecutionContext) -> Iterator[Any]:
        if len(context.partition_keys) != 1:
            raise dg.Failure(description=(
                f"a run of {info.name}_backfill covers {len(context.partition_keys)} partitions; "
                "each chunk is its own run (the backfill policy launches one partition a run)."
            ))  # fmt: skip
        started = context.partition_time_window.start
        try:
            result = runs.run_partition_step(
                root, info.name, window, started, context.run_id, lease=lease,
                try_number=context.retry_number + 1,
            )  # fmt: skip
        except DltOpsError as exc:
            raise _failure(exc) from exc
        if not result.ran:
            context.log.info(f"chunk {result.run_id} was already completed: nothing reloaded")
        yield from _events(keys, result)

    about = (f"Backfill of '{info.name}' over [{window[0].isoformat()}, "
             f"{window[1].isoformat()}) in {window[2]} chunks through _dlt_backfills.")  # fmt: skip
    job = dg.define_asset_job(
        f"{_ident(info.name)}_backfill", selection=dg.AssetSelection.assets(_chunk),
        partitions_def=parts, description=about,
        tags={"dlt_ops/source": info.name, "dlt_ops/backfill": "true"},
    )  # fmt: skip
    return _chunk, job


def _schedule_name(schedule: str, zone: str) -> str:
    suffix = "" if zone == DEFAULT_ZONE else "_" + _ident(zone.replace("+", "plus"))
    if schedule in TAG_CRON:
        return f"dlt_{schedule.lstrip('@')}{suffix}"
    text = str(cron_text(schedule))
    return "dlt_cron_" + "_".join(text.replace("*", "x").replace("/", "every").split()) + suffix


def build_definitions(project_root: Path | str, *, lease: str = "10m") -> dg.Definitions:
    """The project's Definitions (Phase 1 only at load; no source module is imported).

    ``lease`` is the partition runs' chunk lease (``pipeline backfill --lease``). In a code
    location: ``defs = build_definitions(PROJECT_ROOT)``.
    """
    from dlt_ops.config import load_project_config
    from dlt_ops.project.discovery import discover

    root = Path(project_root).resolve()
    config = load_project_config(root)
    project = discover(root)
    assets: list[dg.AssetsDefinition] = []
    jobs: list[Any] = []  # the backfills' asset jobs (unresolved until Definitions resolve them)
    groups: dict[tuple[str, str], list[str]] = {}  # one schedule per cron and time zone
    single_writer: dict[str, bool] = {}
    modules = _Modules.of(project)
    for name, info in project.sources.items():
        specs = _specs(project, config, info, modules[info.pipeline])
        pool = concurrency_pool(config, name, single_writer)
        assets.append(_source_asset(root, info, specs, pool))
        if config.source(name).backfill_start is not None:
            chunk_assets, job = _backfill_job(root, config, info, specs, pool, lease)
            assets.append(chunk_assets)
            jobs.append(job)
        cfg = config.source(name)
        schedule = str(cfg.schedule) if cfg.schedule_valid else "@manual"
        if cron_text(schedule) is not None:
            zone = schedule_zone(schedule, cfg.timezone)
            groups.setdefault((schedule, zone), []).append(name)
    schedules = []
    for (schedule, zone), names in sorted(groups.items()):
        job = dg.define_asset_job(f"{_schedule_name(schedule, zone)}_job",
                                  selection=dg.AssetSelection.groups(*map(_ident, names)),
                                  tags={"dlt_ops/schedule": schedule})  # fmt: skip
        schedules.append(dg.ScheduleDefinition(
            name=_schedule_name(schedule, zone), cron_schedule=str(cron_text(schedule)), job=job,
            execution_timezone=zone,
        ))  # fmt: skip
    return dg.Definitions(assets=assets, jobs=jobs, schedules=schedules)
