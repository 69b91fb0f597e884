"""Registers the ``airflow`` secret backend (:mod:`dlt_ops.airflow.secret_backend`): a source's
secret from an Airflow Variable, its destination's credentials from an Airflow Connection."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dlt_ops import hookimpl
from dlt_ops.airflow.secret_backend import (
    AirflowVariableBackend,
    connection_uri,
    credentials_env,
)
from dlt_ops.plugins import Register

if TYPE_CHECKING:
    from dlt_ops.secrets import SecretBackend

__all__ = ["AirflowVariableBackend", "connection_uri", "credentials_env"]


@hookimpl
def dlt_ops_register_secret_backends(register: Register[SecretBackend]) -> None:
    """Register ``airflow``."""
    register(AirflowVariableBackend(), name="airflow")
