"""Plan and apply the adoption of a dlt-ops 0.1 project (see :mod:`dlt_ops.migrate`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dlt_ops.errors import ConfigError
from dlt_ops.log import get_logger
from dlt_ops.migrate import config_file, tables, working_dirs
from dlt_ops.migrate.model import Change, MigrationPlan

log = get_logger(__name__)


def _config(root: Path) -> tuple[Any, list[Change]]:
    """The project's config as this version reads it after the renames (``None`` when it
    still does not load), and the config changes."""
    from dlt_ops.config import CONFIG_RELPATH
    from dlt_ops.config.loader import config_from_raw
    from dlt_ops.config.secret_values import harvest_project_secrets
    from dlt_ops.config.toml import read_toml

    raw = read_toml(root / CONFIG_RELPATH)
    harvest_project_secrets(root, raw)
    fixed, changes = config_file.renamed(raw)
    try:
        return config_from_raw(root, fixed), changes
    except ConfigError as exc:
        what = f"does not load here yet: {exc}"
        return None, [*changes, Change("config", str(CONFIG_RELPATH), what, automatic=False)]


def _sources(config: Any) -> list[str]:
    from dlt_ops.project.discovery import discover

    return sorted(set(discover(config.root).sources) | set(config.sources))


def plan_migration(root: Path, *, apply: bool = False) -> MigrationPlan:
    """Every change the project at ``root`` needs; with ``apply``, make the automatic ones
    (config first, so the rest reads the project as this version will)."""
    from dlt_ops.destinations import project_registry
    from dlt_ops.runner.pipeline import working_base
    from dlt_ops.target import resolve_target
    from dlt_ops.target.sessions import SessionPool

    config, changes = _config(root)
    plan = MigrationPlan(root, changes)
    if config is None:
        return plan
    if apply and any(c.area == "config" and c.automatic for c in changes):
        config_file.rewrite(config.path)
    registry = project_registry(config)
    old_base = working_dirs.dlt_pipelines_dir()
    seen: set[tuple[str, str, str]] = set()
    pool = SessionPool(registry, config, read_only=not apply)
    try:
        for source in _sources(config):
            where = resolve_target(registry, config, source)
            move = working_dirs.planned_move(
                source, where.pipeline_name, where.dataset, working_base(root, where), old_base
            )
            if move is not None:
                plan.changes.append(move.change())
                if apply:
                    working_dirs.apply(move)
            if not where.has_adapter or where.key in seen:
                continue
            seen.add(where.key)
            session = pool.get(where)
            label = f"{where.engine}:{where.dataset}"
            plan.changes += tables.table_changes(session, label)
            if apply:
                tables.adopt(session)
    finally:
        pool.close()
    plan.applied = apply
    log.info("migrate.planned", root=str(root), changes=len(plan.changes), applied=apply)
    return plan
