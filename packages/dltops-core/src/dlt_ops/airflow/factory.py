"""0.1's module name for the DAG factory: ``from dlt_ops.airflow.factory import
build_schedule_dags`` keeps working (the builders live in :mod:`dlt_ops.airflow.dags`).

Without Airflow 3 the import raises the one-line ImportError naming the extra.
"""

from dlt_ops.airflow import require_airflow

require_airflow()

from dlt_ops.airflow.dags import build_schedule_dags, schedule_to_airflow  # noqa: E402

__all__ = ["build_schedule_dags", "schedule_to_airflow"]
