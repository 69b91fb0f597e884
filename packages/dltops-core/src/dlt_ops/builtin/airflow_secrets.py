"""The ``airflow`` secret backend: a source's secret from an Airflow Variable.

A source claims it with ``airflow_var = "<Variable name>"`` in ``[sources.<X>.dlt_ops]``
(and ``airflow_var_key``, default ``api_secret_key``, the key the source reads). Before the
source function runs, on every path that runs a source (CLI, scheduler, backfill, Airflow
tasks), the Variable's value is handed to dlt as ``sources.<X>.<airflow_var_key>``. The backend
claims sources only where Airflow is importable (the ``airflow`` extra); elsewhere a source
with ``airflow_var`` is refused with the install hint.
"""

from __future__ import annotations

import importlib.util
import os
from typing import TYPE_CHECKING

from dlt_ops import hookimpl
from dlt_ops.plugins import Register

if TYPE_CHECKING:
    from dlt_ops.config import ProjectConfig, SourceConfig
    from dlt_ops.secrets import SecretBackend


def _airflow_installed() -> bool:
    return importlib.util.find_spec("airflow") is not None


class AirflowVariableBackend:
    """Secrets from Airflow Variables (``Variable.get``)."""

    name = "airflow"

    def claims(self, source: SourceConfig) -> bool:
        """Sources that set ``airflow_var``, where Airflow is installed."""
        return bool(source.airflow_var) and _airflow_installed()

    def check(self, config: ProjectConfig, source: str) -> list[str]:
        """Airflow must be importable."""
        if not _airflow_installed():
            return ['Apache Airflow is not installed: pip install "dltops-core[airflow]"']
        return []

    def prepare(self, config: ProjectConfig, source: str) -> None:
        """Fetch the Variable and put it where dlt resolves the source's secret (env, dlt's
        first provider, for this process)."""
        from airflow.sdk import Variable

        cfg = config.source(source)
        value = Variable.get(str(cfg.airflow_var), default=None)
        if value is None:
            from dlt_ops.errors import SecretBackendError

            raise SecretBackendError(
                f"Airflow Variable {cfg.airflow_var!r} does not exist; create it or fix "
                f"airflow_var in [sources.{source}.dlt_ops]."
            )
        env = f"SOURCES__{source.upper()}__{cfg.airflow_var_key.upper()}"
        os.environ[env] = str(value)


@hookimpl
def dlt_ops_register_secret_backends(register: Register[SecretBackend]) -> None:
    """Register ``airflow``."""
    register(AirflowVariableBackend(), name="airflow")
