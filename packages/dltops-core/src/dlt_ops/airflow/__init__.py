"""Airflow 3 DAGs for a dlt-ops project: ``build_schedule_dags`` and ``build_backfill_dag``.

Installed by the ``airflow`` extra (``pip install "dltops-core[airflow]"``). DAG files call the
builders at parse time, which reads the project with Phase 1 only (no source module is
imported); the tasks run sources through :mod:`dlt_ops.orchestration`.
"""

try:
    import airflow.sdk  # noqa: F401
except ImportError:
    raise ImportError(
        'dlt_ops.airflow needs Apache Airflow 3: pip install "dltops-core[airflow]"'
    ) from None

from dlt_ops.airflow.dags import (
    build_backfill_dag,
    build_schedule_dags,
    schedule_to_airflow,
)
from dlt_ops.airflow.pools import POOLS_VARIABLE, SCHEDULE_POOL_PREFIX, source_pools

__all__ = [
    "POOLS_VARIABLE",
    "SCHEDULE_POOL_PREFIX",
    "build_backfill_dag",
    "build_schedule_dags",
    "schedule_to_airflow",
    "source_pools",
]
