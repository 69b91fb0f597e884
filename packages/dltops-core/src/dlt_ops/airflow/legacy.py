"""0.1's Airflow plugin surface, importable without Airflow: ``AirflowVariableBackend`` with
0.1's ``secret_requests``/``get`` and ``airflow_rules()``.

The backend is this version's ``airflow`` secret backend (the one the plugin registry loads);
0.1's two methods answer from the same keys (``airflow_var``, ``airflow_var_key``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from dlt_ops.airflow import secret_backend
from dlt_ops.validate.framework import Rule

#: what ``import dlt_ops.airflow``'s DAG builders raise without Airflow 3 (one line)
INSTALL_HINT = 'dlt_ops.airflow needs Apache Airflow 3: pip install "dltops-core[airflow]"'


class SecretRequest(NamedTuple):
    """0.1's claim: read Airflow Variable ``ref``, hand it to the source as ``key``."""

    ref: str
    key: str


class AirflowVariableBackend(secret_backend.AirflowVariableBackend):
    """The ``airflow`` secret backend, plus 0.1's claim and fetch calls."""

    def secret_requests(self, section: Mapping[str, Any]) -> tuple[SecretRequest, ...]:
        """What a ``[sources.<X>.dlt_ops]`` table asks for: one request when it sets
        ``airflow_var`` (the key defaults to ``api_secret_key``), else none."""
        ref = section.get("airflow_var")
        if not ref:
            return ()
        key = section.get("airflow_var_key") or secret_backend.DEFAULT_VAR_KEY
        return (SecretRequest(str(ref), str(key)),)

    def get(self, ref: str) -> str:
        """The value of Airflow Variable ``ref``; ImportError naming the extra without Airflow."""
        try:
            from airflow.sdk import Variable
        except ImportError:
            raise ImportError(INSTALL_HINT) from None
        value = Variable.get(ref, default=None)
        if value is None:
            from dlt_ops.errors import SecretBackendError

            raise SecretBackendError(
                f"Airflow Variable {ref!r} does not exist; create it or fix airflow_var."
            )
        return str(value)


def airflow_rules() -> tuple[Rule, ...]:
    """The Airflow validation rules in force here: ``airflow_var_required`` when Airflow is
    installed, none without it (0.1's validator provider)."""
    from dlt_ops.validate.airflow_rules import AIRFLOW_RULE, airflow_available

    return (AIRFLOW_RULE,) if airflow_available() else ()
