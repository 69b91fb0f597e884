"""Airflow 3 DAGs for a dlt-ops project: ``build_schedule_dags`` and ``build_backfill_dag``.

Installed by the ``airflow`` extra (``pip install "dltops-core[airflow]"``). DAG files call the
builders at parse time, which reads the project with Phase 1 only (no source module is
imported); the tasks run sources through :mod:`dlt_ops.orchestration`.

The module imports without Airflow (0.1's plugin surface, ``AirflowVariableBackend`` and
``airflow_rules``, needs none); the DAG builders and pool names are loaded on first use, and
without Airflow 3 that use raises one ``ImportError`` naming the extra.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from dlt_ops.airflow.legacy import INSTALL_HINT, AirflowVariableBackend, airflow_rules

#: the names that need Airflow 3: name -> module
_NEEDS_AIRFLOW = {
    "build_backfill_dag": "dlt_ops.airflow.dags",
    "build_schedule_dags": "dlt_ops.airflow.dags",
    "schedule_to_airflow": "dlt_ops.airflow.dags",
    "POOLS_VARIABLE": "dlt_ops.airflow.pools",
    "SCHEDULE_POOL_PREFIX": "dlt_ops.airflow.pools",
    "source_pools": "dlt_ops.airflow.pools",
}

__all__ = ["AirflowVariableBackend", "airflow_rules", "require_airflow", *_NEEDS_AIRFLOW]


def require_airflow() -> None:
    """Raise the one-line ImportError naming the extra unless Airflow 3 is importable."""
    try:
        import airflow.sdk  # noqa: F401
    except ImportError:
        raise ImportError(INSTALL_HINT) from None


def __getattr__(name: str) -> Any:
    module = _NEEDS_AIRFLOW.get(name)
    if module is None:
        raise AttributeError(f"module 'dlt_ops.airflow' has no attribute {name!r}")
    require_airflow()
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
