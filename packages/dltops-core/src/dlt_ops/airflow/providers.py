"""dlt's own Airflow config provider, switched off inside dlt-ops tasks by default.

With Airflow importable, dlt adds a provider that asks Airflow for every config and secret key
it resolves (``PROVIDERS__ENABLE_AIRFLOW_SECRETS``, on by default in dlt 1.x). In Airflow 3 each
ask is a call through the task supervisor to the API server: hundreds per task, serially.
dlt-ops tasks get their secrets from ``airflow_var``/``airflow_conn`` (the ``airflow`` secret
backend) and ``.dlt/`` files, so the factories switch the provider off for the task's duration
unless they were built with ``dlt_airflow_secrets=True``.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

#: dlt's setting (``[providers] enable_airflow_secrets``) as an environment variable.
PROVIDER_ENV = "PROVIDERS__ENABLE_AIRFLOW_SECRETS"
#: the name dlt gives its Airflow provider
PROVIDER_NAME = "Airflow Secrets TOML Provider"

F = TypeVar("F", bound=Callable[..., Any])
_state = {"switched": False}  # providers were rebuilt without Airflow's in this process


def _rebuild_providers() -> None:
    """dlt reads the setting when it builds its providers: rebuild them if it already did."""
    if "dlt.common.configuration.container" not in sys.modules:
        return  # dlt has built nothing yet: it reads the variable when it does
    from dlt.common.configuration.container import Container
    from dlt.common.configuration.specs.pluggable_run_context import PluggableRunContext

    container = Container()
    if PluggableRunContext in container:
        container[PluggableRunContext].reload_providers()


@contextmanager
def dlt_airflow_provider(enabled: bool) -> Iterator[None]:
    """Run the body with dlt's Airflow provider off (``enabled=False``) or as dlt has it."""
    if enabled:
        if _state["switched"]:  # an earlier task of this process switched it off
            _state["switched"] = False
            _rebuild_providers()
        yield
        return
    previous = os.environ.get(PROVIDER_ENV)
    os.environ[PROVIDER_ENV] = "false"
    _rebuild_providers()
    _state["switched"] = True
    try:
        yield
    finally:  # providers stay as built; an enabled task of this process rebuilds them
        if previous is None:
            os.environ.pop(PROVIDER_ENV, None)
        else:
            os.environ[PROVIDER_ENV] = previous


def with_dlt_airflow_provider(fn: F, enabled: bool) -> F:
    """``fn`` run under :func:`dlt_airflow_provider` (the signature Airflow reads is kept)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with dlt_airflow_provider(enabled):
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
