"""Resolving a source's :class:`~dlt_ops.target.model.Target`: tier, adapter, physical identity.

Resolution imports an adapter's plugin module (never its driver) and looks credentials up as
dlt would; nothing connects.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

from dlt_ops.adapters.derived_label import is_derived
from dlt_ops.destinations import connection_target, load_adapter, resolve_destination
from dlt_ops.target.model import Target, Tier

if TYPE_CHECKING:
    from dlt_ops.adapters import ConnectionTarget, DestinationAdapter
    from dlt_ops.config import ProjectConfig
    from dlt_ops.destinations import ResolvedDestination
    from dlt_ops.plugins import PluginRegistry

#: targets resolved inside :func:`resolving_once`: (registry, config, where) by identity; and
#: what :func:`once_per_block` keeps
_RESOLVED: ContextVar[dict[tuple[Any, ...], tuple[Any, ...]] | None] = ContextVar(
    "dlt_ops_resolved_targets", default=None
)


@contextmanager
def resolving_once() -> Iterator[None]:
    """Inside the block each source's target (and its credentials) is resolved once, however
    many session pools and checks ask: a fleet-wide reader that reads in several passes (the
    scheduler's due check, freshness check and alert state; ``report``) paid the credentials
    lookup in env vars and both TOML files per source per pass. A database's content stamp
    (:meth:`~dlt_ops.adapters.DestinationAdapter.content_stamp`) is taken once in the block
    too. For a block that changes neither the environment, the config nor the databases it
    reads: what was resolved first holds to its end."""
    if _RESOLVED.get() is not None:  # nested: the outer block's answers hold
        yield
        return
    from dlt_ops.config.credentials import lookups_frozen

    token = _RESOLVED.set({})
    try:
        with lookups_frozen():  # and the environment and TOML files they are looked up in
            yield
    finally:
        _RESOLVED.reset(token)


_V = TypeVar("_V")
_BLOCK_VALUE = object()  # the memo's key for what once_per_block keeps, beside resolved targets

# the password of a URL (scheme://user:password@host) and password-like mapping keys: what an
# identity must never carry, whatever secrets are known to the redactor at the time
_URL_PASSWORD = re.compile(r"(?P<head>[a-zA-Z][a-zA-Z0-9+.-]*://[^:/@\s]*):[^@\s]*@")
_SECRET_KEY = re.compile(r"pass|secret|token|key|auth", re.IGNORECASE)


def adapter_tier(registry: PluginRegistry, engine: str) -> Tier:
    """The tier ``engine`` runs at with the installed plugins (metadata only, no imports)."""
    claims = [s for s in registry.sources("destination") if s.name == engine]
    if not claims:
        return Tier.CORE
    return Tier.DERIVED if all(is_derived(s.value) for s in claims) else Tier.FULL


def credentials_identity(credentials: object, pipeline_name: str | None) -> str:
    """The credentials as a database identity with every secret part removed (``None``, the
    engine's default, is told apart per pipeline, as dlt's defaults are)."""
    if credentials is None or credentials == "":
        return f"default:{pipeline_name}"
    if isinstance(credentials, str):
        return _URL_PASSWORD.sub(lambda m: f"{m['head']}@", credentials)
    if isinstance(credentials, dict):
        kept = sorted(
            (str(k), str(v)) for k, v in credentials.items() if not _SECRET_KEY.search(str(k))
        )
        return ";".join(f"{k}={v}" for k, v in kept)
    return type(credentials).__name__


def database_identity(adapter: DestinationAdapter | None, target: ConnectionTarget) -> str:
    """Which physical database ``target`` opens: the adapter's answer when it gives one (a file
    engine: the file's absolute path), else the credentials without their secrets."""
    identify = getattr(adapter, "database_identity", None)
    if callable(identify):
        found = identify(target)
        if isinstance(found, str) and found:
            return found
    return credentials_identity(target.credentials, target.pipeline_name)


def target_of(
    registry: PluginRegistry, config: ProjectConfig, where: ResolvedDestination
) -> Target:
    """``where`` resolved against the installation: tier, capabilities, physical identity."""
    return target_and_connection(registry, config, where)[0]


def target_and_connection(
    registry: PluginRegistry, config: ProjectConfig, where: ResolvedDestination
) -> tuple[Target, ConnectionTarget]:
    """:func:`target_of`, and the connection target its identity was read from (credentials
    looked up as dlt would; without the adapter's ``dlt_setting_keys``), for a caller that
    connects next and need not look the credentials up again; inside :func:`resolving_once`,
    the answer it gave the first time."""
    memo = _RESOLVED.get()
    if memo is None:
        return _resolve(registry, config, where)
    key = (id(registry), id(config), where)
    found = memo.get(key)
    if found is None:  # the registry and config are kept with the answer: their ids stay theirs
        found = memo[key] = (*_resolve(registry, config, where), registry, config)
    return found[0], found[1]


def once_per_block(key: Hashable, build: Callable[[], _V]) -> _V:
    """``build()``, computed once per :func:`resolving_once` block for ``key`` (each call
    outside one)."""
    memo = _RESOLVED.get()
    if memo is None:
        return build()
    slot = (_BLOCK_VALUE, key)
    if slot not in memo:
        memo[slot] = (build(),)
    return memo[slot][0]


def remembered_connection(
    registry: PluginRegistry, config: ProjectConfig, target: Target
) -> ConnectionTarget | None:
    """The connection target :func:`target_and_connection` found for ``target``'s source in
    the current :func:`resolving_once` block (``None`` outside one, or when not resolved
    there): a caller handed a :class:`Target` need not look its credentials up again."""
    memo = _RESOLVED.get()
    if memo is None:
        return None
    from dlt_ops.destinations import ResolvedDestination

    where = ResolvedDestination(target.engine, target.dataset, target.pipeline_name)
    found = memo.get((id(registry), id(config), where)) or memo.get(
        (id(registry), id(config), target)
    )
    return found[1] if found is not None and found[0] == target else None


def _resolve(
    registry: PluginRegistry, config: ProjectConfig, where: ResolvedDestination
) -> tuple[Target, ConnectionTarget]:
    tier = adapter_tier(registry, where.engine)
    adapter = load_adapter(registry, where.engine) if tier.has_adapter else None
    conn = connection_target(config, where)
    target = Target(
        engine=where.engine,
        dataset=where.dataset,
        pipeline_name=where.pipeline_name,
        database=database_identity(adapter, conn),
        tier=tier,
        capabilities=adapter.capabilities if adapter is not None else None,
    )
    return target, conn


def resolve_target(
    registry: PluginRegistry, config: ProjectConfig, source: str, dataset: str | None = None
) -> Target:
    """The :class:`Target` of ``source`` (``dataset`` overrides the configured one); raises a
    ``ConfigError`` for a missing destination, ``PluginLoadError`` for a broken adapter."""
    return target_of(registry, config, resolve_destination(config, source, dataset))
