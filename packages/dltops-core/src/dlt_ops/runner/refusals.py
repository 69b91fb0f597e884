"""Mistakes a run refuses before it writes anything (exit 2: "nothing was done", SPEC §1.4).

Everything here runs in ``prepare_run``, before the ledger's start row, the destination session
or dlt's working state exist. A mistake that can only be seen once the run started (a source
that raises when called, a model that lacks an asserted column) is a failed run (exit 1) with
its ledger row; a mistake visible from the project's files and the plugins must never cost a
database file, a schema or a ``failed`` row.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from dlt_ops.errors import (
    CredentialsInConfigError,
    PreflightError,
    ProjectNotWritableError,
    UnknownConfigKeyError,
    UnknownResourceError,
)
from dlt_ops.project.model import STATE_DIR

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig
    from dlt_ops.destinations import ResolvedDestination
    from dlt_ops.plugins import PluginRegistry
    from dlt_ops.project.model import Project


@contextmanager
def refused_before_start() -> Iterator[None]:
    """A preflight refusal raised before the start row changes nothing: exit 2, not 1."""
    try:
        yield
    except PreflightError as exc:
        exc.exit_code = 2
        raise


def check_resource_names(
    project: Project, config: ProjectConfig, source: str, wanted: tuple[str, ...]
) -> None:
    """``-r`` names resources the source has (static scan, else the cached sandboxed look).

    A name the cached list lacks is looked up live before the run is refused: a source that
    reflects a database (or lists files) can have gained the resource since the cache was
    written, and the live look rewrites the cache. When no look can list the source's
    resources (it cannot be instantiated without its credentials, say) the check is left to
    the run, which then fails with its ledger row.
    """
    if not wanted:
        return
    known = set(project.source(source).static_resources)
    if set(wanted) <= known:
        return
    from dlt_ops.project.introspect import introspect

    for cached in (True, False):  # the facts validate cached, then a live sandboxed look
        try:
            result = introspect(project, config, [source], cached_facts=cached)[source]
        except Exception:  # noqa: BLE001 - the look is advisory; the run re-checks
            return
        if result.facts is None:
            return
        listed = known | set(result.facts.resource_names)
        unknown = [name for name in wanted if name not in listed]
        if not unknown:
            return
        if not result.facts_cached:  # already live: the source really lacks them
            break
    raise UnknownResourceError(source, unknown, sorted(listed))


def check_credentials_file(config: ProjectConfig, where: ResolvedDestination) -> None:
    """No password-bearing destination credentials in ``config.toml`` (dlt rejects them)."""
    from dlt_ops.config.credentials import credentials_in_config

    key = credentials_in_config(config.raw, where.engine, where.pipeline_name)
    if key is not None:
        raise CredentialsInConfigError(key)


def check_config_keys(
    config: ProjectConfig, source: str, registry: PluginRegistry | None = None
) -> None:
    """No unknown key in ``[dlt_ops]`` or the run's ``[sources.<source>.dlt_ops]``: validate
    only warns about them, but a run would silently ignore a misspelled ``dataset``. A key a
    plugin declares (``config_key``) is known, and its value checked."""
    mine = ("dlt_ops.", f"sources.{source}.dlt_ops.")
    found = [w for w in config.warnings if w.key.startswith(mine)]
    if found and registry is not None:
        from dlt_ops.config.plugin_keys import undeclared

        found = undeclared(config, registry, found)
    if found:
        raise UnknownConfigKeyError([w.message for w in found])


def check_state_writable(root: Path) -> None:
    """The project's ``.dlt-ops/`` (or, before the first run, the project root) is writable."""
    state = root / STATE_DIR
    target = state if state.exists() else root
    if not os.access(target, os.W_OK):
        raise ProjectNotWritableError(str(target))


def check_before_start(
    registry: PluginRegistry,
    config: ProjectConfig,
    project: Project,
    where: ResolvedDestination,
    source: str,
    resources: tuple[str, ...],
) -> None:
    """Every refusal that needs no running source, in the order a user would fix them."""
    from dlt_ops.secrets import resolve_secret_backend

    check_config_keys(config, source, registry)
    check_state_writable(config.root)
    check_credentials_file(config, where)
    with refused_before_start():
        resolve_secret_backend(config, registry, source)  # a broken secrets.toml, say
    check_resource_names(project, config, source, resources)
