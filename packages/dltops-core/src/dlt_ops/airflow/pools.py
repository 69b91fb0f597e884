"""Per-source Airflow pools: which pool each source's tasks take, creating them, and the
check that keeps a task from waiting forever on a pool nobody created.

Airflow 3 gives DAG files and tasks no access to pools (the metadata database is closed to
both), so pools cannot be created while a DAG file is parsed. They are created by
``dlt-ops airflow pools --apply``, run where the ``airflow`` CLI works (a host with the
metadata database configured); it also records the pools it manages in the Airflow Variable
:data:`POOLS_VARIABLE`. A DAG whose tasks use such pools starts with a check task (in
``default_pool``) that reads that Variable and fails the DAG run, naming the missing pools and
the command, instead of leaving the source tasks ``scheduled`` forever (Airflow's scheduler
only logs a warning for a pool that does not exist).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from dlt_ops.errors import AirflowPoolError, UnknownSourceError, UsageError

#: Airflow's own pool, which always exists.
DEFAULT_POOL = "default_pool"
#: The suggested per-source pool prefix: ``<prefix><source>``, one slot each.
SCHEDULE_POOL_PREFIX = "dlt_ops_"
#: The Airflow Variable listing the pools ``dlt-ops airflow pools --apply`` created or found.
POOLS_VARIABLE = "dlt_ops_pools"
#: The check task's id in a DAG whose tasks use per-source pools.
CHECK_TASK_ID = "dlt_ops_pools_check"

Pools = Mapping[str, str] | str | None


def source_pools(
    sources: Iterable[str], pools: Pools = None, pool: str | None = None
) -> dict[str, str]:
    """The pool each of ``sources`` takes: ``pools`` as a mapping (source → pool) or a prefix
    (``<prefix><source>``), else ``pool``, else ``default_pool``. A mapping naming a source
    not among ``sources`` is a usage error."""
    names = list(sources)
    if isinstance(pools, str):
        if not pools:
            raise UsageError("pools= prefix is empty; pass e.g. pools='dlt_ops_'.")
        return {name: f"{pools}{name}" for name in names}
    mapping = dict(pools or {})
    for name in sorted(set(mapping) - set(names)):  # a typo would leave a source unpooled
        raise UnknownSourceError(name, sorted(names))
    return {name: mapping.get(name) or pool or DEFAULT_POOL for name in names}


def select_sources(known: Iterable[str], wanted: Iterable[str] | None) -> list[str]:
    """``known`` narrowed to ``wanted`` (all when ``None``); an unknown name is an error."""
    names = sorted(known)
    if wanted is None:
        return names
    picked = list(dict.fromkeys(wanted))
    for name in picked:
        if name not in names:
            raise UnknownSourceError(name, names)
    return [n for n in names if n in picked]


def _registered(raw: Any) -> set[str]:
    if not raw:
        return set()
    try:
        return set(json.loads(raw) if isinstance(raw, str) else raw)
    except (TypeError, ValueError):
        return set()


def check_pools(pools: list[str], root: str) -> list[str]:
    """The check task: fail unless every pool in ``pools`` is recorded as created (one
    Variable look-up per DAG run); returns ``pools``."""
    from airflow.sdk import Variable

    created = _registered(Variable.get(POOLS_VARIABLE, default=None))
    missing = sorted(set(pools) - created - {DEFAULT_POOL})
    if missing:
        raise AirflowPoolError(
            f"Airflow pool(s) {missing} used by this DAG's tasks were not created by dlt-ops: "
            f"run `dlt-ops --root {root} airflow pools --apply` (with the same pools) where the "
            f"airflow CLI works, then clear this task. A task in a missing pool would wait in "
            f"'scheduled' forever."
        )
    return pools


def apply_pools(pools: Mapping[str, int]) -> list[tuple[str, int, bool]]:
    """Create each missing pool with its slots (an existing pool keeps its slots) and record
    them all in :data:`POOLS_VARIABLE`; ``(name, slots, created)`` per pool. Needs the
    metadata database (the ``airflow`` CLI's environment)."""
    from airflow.models.pool import Pool
    from airflow.models.variable import Variable

    done: list[tuple[str, int, bool]] = []
    for name, slots in sorted(pools.items()):
        found = Pool.get_pool(name)
        if found is None:
            Pool.create_or_update_pool(name, slots, "dlt-ops: one source's tasks", False)
            done.append((name, slots, True))
        else:
            done.append((name, int(found.slots), False))
    registered = _registered(Variable.get(POOLS_VARIABLE, default_var=None))
    note = "Pools created or found by `dlt-ops airflow pools --apply`"
    Variable.set(POOLS_VARIABLE, json.dumps(sorted(registered | set(pools))), description=note)
    return done
