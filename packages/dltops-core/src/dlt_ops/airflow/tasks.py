"""0.1's ``dlt_ops.airflow.tasks``: the ``cleanup_old_dlt_files`` Airflow task, for DAG files
written for 0.1 (``build_schedule_dags(cleanup_data_dir=...)`` appends it, too).

Without Airflow 3 the import raises the one-line ImportError naming the extra.
"""

from __future__ import annotations

from dlt_ops.airflow import require_airflow

require_airflow()

from datetime import timedelta  # noqa: E402

from airflow.sdk import task  # noqa: E402

from dlt_ops.airflow.scratch import sweep_scratch  # noqa: E402

#: Airflow's ``none_failed``: sweep after the pipeline tasks, unless one of them failed
CLEANUP_TRIGGER_RULE = "none_failed"


@task(trigger_rule=CLEANUP_TRIGGER_RULE)
def cleanup_old_dlt_files(data_dir: str | None = None, days: int = 3, enabled: bool = True) -> None:
    """Delete ``dlt_*`` scratch files and folders older than ``days`` under ``data_dir`` (the
    system temp directory by default); ``enabled=False`` makes the task a no-op."""
    if enabled:
        sweep_scratch(data_dir, older_than=timedelta(days=days))


__all__ = ["cleanup_old_dlt_files"]
